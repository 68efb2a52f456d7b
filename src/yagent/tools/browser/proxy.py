"""browser.proxy: the browser's only way out — a forward proxy that judges every request.

Contract:
- Chromium is started with this proxy for every scheme and with loopback *not* bypassed
  (`--proxy-bypass-list=<-loopback>`), so every navigation, redirect hop, subresource, popup,
  worker and WebSocket reaches the network only through `_handle`. Request interception in the
  browser cannot promise that: it is not consulted for redirect hops.
- Each request's URL (for CONNECT: `https://host:port/`) is judged by `netguard.Guard.check` with
  the session's `Allow`. A refusal answers `403` with the reason, is reported through `on_block`,
  and no connection is attempted.
- The proxy dials the addresses netguard judged, never the name again, so a name cannot resolve to
  one address at the check and another at the dial (DNS rebinding).
- Plain HTTP is forwarded one request per client connection (`Connection: close` upstream, the
  client connection closed after the response); CONNECT is tunnelled byte for byte, so TLS stays
  end to end. Unparseable requests get `400`, heads over `MAX_HEAD` get `431`, an upstream that
  cannot be reached gets `502`.
Leaves to the caller: starting and closing it with the browser, and what a refusal means to it.
It is an asyncio server rather than an anyio task group because it lives as long as a browser
session, across many tool calls made from different tasks (Playwright's connection has the same
shape).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

import anyio

from yagent.kernel.confine import netguard

MAX_HEAD = 64 * 1024
CONNECT_TIMEOUT = 10.0  # seconds per address dialled
_CHUNK = 64 * 1024
_DROPPED_HEADERS = frozenset(
    {"proxy-connection", "proxy-authorization", "connection", "keep-alive"}
)


@dataclass(frozen=True, slots=True)
class Refusal:
    """One request the proxy refused: the URL as the browser asked for it, and netguard's word."""

    url: str
    reason: str
    layer: str


@dataclass(frozen=True, slots=True)
class Head:
    method: str
    target: str
    version: str
    headers: tuple[tuple[str, str], ...]


class BadRequestError(ValueError):
    """A request head the proxy cannot read; answered with 400."""


def parse_head(raw: bytes) -> Head:
    """The request line and headers of one HTTP/1.x request head (ending in a blank line)."""
    try:
        text = raw.decode("latin-1")
    except UnicodeDecodeError as exc:  # pragma: no cover - latin-1 decodes every byte
        raise BadRequestError("undecodable head") from exc
    lines = text.split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        raise BadRequestError(f"bad request line {lines[0][:80]!r}")
    headers: list[tuple[str, str]] = []
    for line in lines[1:]:
        if not line:
            continue
        name, sep, value = line.partition(":")
        if not sep or not name or name != name.strip():
            raise BadRequestError(f"bad header line {line[:80]!r}")
        headers.append((name, value.strip()))
    return Head(parts[0].upper(), parts[1], parts[2], tuple(headers))


def target_url(head: Head) -> str:
    """The URL netguard judges: the absolute-form target, or https://authority/ for CONNECT."""
    if head.method == "CONNECT":
        authority = head.target
        if "/" in authority or not authority.rpartition(":")[2].isdigit():
            raise BadRequestError(f"CONNECT target is not host:port: {authority[:80]!r}")
        return f"https://{authority}/"
    if not head.target.lower().startswith("http://"):
        raise BadRequestError(f"not an absolute http URL: {head.target[:80]!r}")
    return head.target


def origin_request(head: Head) -> bytes:
    """The head forwarded upstream: origin-form target, hop-by-hop headers replaced by close."""
    parts = urlsplit(head.target)
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    lines = [f"{head.method} {path} {head.version}"]
    lines.extend(f"{k}: {v}" for k, v in head.headers if k.lower() not in _DROPPED_HEADERS)
    lines.append("Connection: close")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def _status(code: int, phrase: str, body: str = "") -> bytes:
    data = body.encode()
    return (
        f"HTTP/1.1 {code} {phrase}\r\nContent-Type: text/plain; charset=utf-8\r\n"
        f"Content-Length: {len(data)}\r\nConnection: close\r\n\r\n"
    ).encode() + data


async def _pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
    """Copy until EOF, then half-close `dst`; a reset on either side just ends the copy."""
    with contextlib.suppress(OSError):
        while chunk := await src.read(_CHUNK):
            dst.write(chunk)
            await dst.drain()
        if dst.can_write_eof():
            dst.write_eof()


class GuardedProxy:
    """One proxy on 127.0.0.1 (ephemeral port) for one browser session."""

    def __init__(
        self,
        guard: netguard.Guard,
        allow: netguard.Allow,
        on_block: Callable[[Refusal], None],
        *,
        connect_timeout: float = CONNECT_TIMEOUT,
    ) -> None:
        self._guard = guard
        self._allow = allow
        self._on_block = on_block
        self._connect_timeout = connect_timeout
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self.port = 0

    async def start(self) -> int:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0, limit=MAX_HEAD)
        self.port = int(self._server.sockets[0].getsockname()[1])
        return self.port

    async def close(self) -> None:
        server, self._server = self._server, None
        if server is None:
            return
        server.close()
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            await self._handle(reader, writer)
        except (OSError, asyncio.IncompleteReadError):
            pass  # the browser went away mid-request; nothing is left to answer
        finally:
            self._tasks.discard(task)
            writer.close()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = parse_head(await reader.readuntil(b"\r\n\r\n"))
            url = target_url(head)
        except asyncio.LimitOverrunError:
            writer.write(_status(431, "Request Header Fields Too Large"))
            return
        except BadRequestError as exc:
            writer.write(_status(400, "Bad Request", str(exc)))
            return
        try:
            checked = await self._guard.check(url, self._allow)
        except netguard.BlockedError as exc:
            self._on_block(Refusal(url, str(exc), str(exc.layer)))
            writer.write(_status(403, "Forbidden", f"blocked by netguard: {exc}"))
            return
        upstream = await self._dial(checked)
        if upstream is None:
            writer.write(_status(502, "Bad Gateway", f"cannot connect to {checked.target.host}"))
            return
        up_reader, up_writer = upstream
        try:
            if head.method == "CONNECT":
                writer.write(b"HTTP/1.1 200 Connection Established\r\n\r\n")
            else:
                up_writer.write(origin_request(head))
            await self._relay(reader, writer, up_reader, up_writer)
        finally:
            up_writer.close()

    async def _dial(
        self, checked: netguard.Checked
    ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter] | None:
        for address in checked.addresses:
            with anyio.move_on_after(self._connect_timeout), contextlib.suppress(OSError):
                return await asyncio.open_connection(str(address), checked.target.port)
        return None

    @staticmethod
    async def _relay(
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        up_reader: asyncio.StreamReader,
        up_writer: asyncio.StreamWriter,
    ) -> None:
        async with anyio.create_task_group() as tg:
            tg.start_soon(_pipe, reader, up_writer)
            await _pipe(up_reader, writer)
            tg.cancel_scope.cancel()  # the response (or the tunnel's far side) has ended
