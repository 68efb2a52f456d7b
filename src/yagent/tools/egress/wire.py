"""The egress proxy's wire: reading and judging-ready parsing of one request head, the refusal
reply, and the byte pump of an allowed connection.

Guarantees: a head is read only up to `MAX_HEADER` bytes (more is a 431, never buffered); a
request line, header line or Content-Length that is not plain HTTP/1.x is a 400; `CONNECT` needs
an explicit `host:port`; a plain request must be an absolute `http://` URI and is rebuilt for the
origin (origin-form target, `Host` from the URL, proxy and hop-by-hop headers dropped,
`Connection: close`, only `Content-Length` body bytes — chunked uploads are a 411) so nothing can
ride behind it; the host is read by netguard's strict URL reader. `tunnel` copies both ways until
the upstream ends or nothing moves for `IDLE_TIMEOUT`; a broken side ends it quietly.
Tagged connections: the head may open with the bridge's tag line (`sandboxbridge.tag_line`,
`YAGENT-TAG <32 lowercase hex>\r\n`, counted in `MAX_HEADER`); `read_head` splits it off and
hands the tag beside the head (also on a refusal, once the line is complete), and a line that
starts with `YAGENT-TAG` but is not exactly that form is a 400. No tag line: an untagged head.
"""

from __future__ import annotations

import contextlib
import re
import urllib.parse
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass

import anyio
import anyio.abc
import httpcore

from yagent.kernel.confine import netguard
from yagent.tools.egress.sandboxbridge import TAG_WORD, valid_tag

MAX_HEADER = 16 * 1024
IDLE_TIMEOUT = 300.0
CHUNK = 65536
_DROPPED_HEADERS = frozenset(
    {"host", "connection", "keep-alive", "proxy-connection", "proxy-authorization", "te"}
)
_AUTHORITY = re.compile(r"(\[[0-9a-fA-F:.]+\]|[^\[\]:/?#@\s]+):([0-9]{1,5})")
_PHRASES = {400: "Bad Request", 403: "Forbidden", 408: "Request Timeout", 411: "Length Required"}
_PHRASES |= {431: "Request Header Fields Too Large", 502: "Bad Gateway", 503: "Unavailable"}


class Refused(Exception):
    """A request the proxy answers with `status` and a one-line `reason`."""

    def __init__(
        self, status: int, reason: str, host: str = "-", port: int = 0, *, recorded: str = ""
    ) -> None:
        super().__init__(reason)
        self.status, self.reason, self.host, self.port = status, reason, host, port
        self.recorded = recorded or reason  # the reason as decisions keep it
        self.tag: str | None = None  # the connection's tag, when its line was read


@dataclass(frozen=True, slots=True)
class Head:
    tag: str | None
    head: bytes
    rest: bytes  # what came after the head (body bytes, or a tunnel's first bytes)


@dataclass(frozen=True, slots=True)
class Request:
    method: str
    target: netguard.Target
    head: bytes  # what goes upstream (empty for CONNECT)
    body: int  # Content-Length bytes to forward after the head


def refusal(why: Refused) -> bytes:
    """The whole reply for a refused request."""
    body = (why.reason.replace("\r", " ").replace("\n", " ") + "\n").encode()
    head = (
        f"HTTP/1.1 {why.status} {_PHRASES.get(why.status, 'Refused')}\r\n"
        "Content-Type: text/plain; charset=utf-8\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    return head.encode() + body


async def read_head(client: anyio.abc.SocketStream, timeout: float) -> Head:  # noqa: ASYNC109
    """The head (tag line split off) within `timeout` seconds and `MAX_HEADER` bytes."""
    buffer = b""
    try:
        with anyio.fail_after(timeout):
            while True:
                end = buffer.find(b"\r\n\r\n")
                if end >= 0 and end + 4 <= MAX_HEADER:
                    tag, head = split_tag(buffer[:end])
                    return Head(tag, head, buffer[end + 4 :])
                if len(buffer) > MAX_HEADER:
                    raise Refused(431, f"request head over {MAX_HEADER} bytes")
                try:
                    buffer += await client.receive(CHUNK)
                except anyio.EndOfStream:
                    raise Refused(400, "connection closed before the request head ended") from None
    except TimeoutError:
        refused = Refused(408, "request head not received in time")
        refused.tag = _tag_seen(buffer)
        raise refused from None
    except Refused as refused:
        refused.tag = refused.tag or _tag_seen(buffer)
        raise


def split_tag(head: bytes) -> tuple[str | None, bytes]:
    if not head.startswith(TAG_WORD.encode()):
        return None, head
    line, _, rest = head.partition(b"\r\n")
    word, _, tag = line.decode("latin-1").partition(" ")
    if word != TAG_WORD or not valid_tag(tag):
        raise Refused(400, "malformed tag line")
    return tag, rest


def _tag_seen(buffer: bytes) -> str | None:
    """The tag of a head not read to its end, when its tag line is complete and well formed."""
    line, ended, _ = buffer.partition(b"\r\n")
    if not ended:
        return None
    try:
        return split_tag(line)[0]
    except Refused:
        return None


def parse(head: bytes) -> Request:
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        raise Refused(400, "malformed request line")
    method, url, _ = parts
    fields: list[tuple[str, str]] = []
    for line in lines[1:]:
        name, colon, value = line.partition(":")
        if not colon or not name or name != name.strip() or not name.isascii():
            raise Refused(400, "malformed header line")
        fields.append((name.lower(), value.strip()))
    if method == "CONNECT":
        found = _AUTHORITY.fullmatch(url)
        if found is None:
            raise Refused(400, "CONNECT needs host:port")
        return Request(method, _target(f"http://{url}/"), b"", 0)
    if not url.lower().startswith("http://"):
        raise Refused(400, "only absolute http:// URIs are forwarded (https goes by CONNECT)")
    return _plain(method, url, fields)


def _plain(method: str, url: str, fields: list[tuple[str, str]]) -> Request:
    if not re.fullmatch(r"[A-Z]{1,16}", method):
        raise Refused(400, "malformed method")
    target = _target(url)
    if any(name == "transfer-encoding" for name, _ in fields):
        raise Refused(411, "chunked request bodies are not forwarded; send Content-Length")
    lengths = {value for name, value in fields if name == "content-length"}
    if len(lengths) > 1 or not all(v.isascii() and v.isdigit() for v in lengths):
        raise Refused(400, "bad Content-Length")
    parts = urllib.parse.urlsplit(url)
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    host = f"[{target.host}]" if ":" in target.host else target.host
    authority = host if target.port == 80 else f"{host}:{target.port}"
    out = [f"{method} {path} HTTP/1.1", f"Host: {authority}"]
    out += [f"{name}: {value}" for name, value in fields if name not in _DROPPED_HEADERS]
    out.append("Connection: close")
    head = ("\r\n".join(out) + "\r\n\r\n").encode("latin-1")
    return Request(method, target, head, int(next(iter(lengths), "0")))


def _target(url: str) -> netguard.Target:
    try:
        return netguard.split_url(url)
    except netguard.BlockedError as exc:
        raise Refused(403, f"refused by netguard: {exc.reason}") from exc


async def tunnel(
    client: anyio.abc.SocketStream,
    upstream: httpcore.AsyncNetworkStream,
    rest: bytes,
    body: int | None,
) -> None:
    """Copy both ways until the upstream side ends or nothing moves for `IDLE_TIMEOUT`.

    `body` None: an opaque tunnel, the client's bytes go up until it stops. A number: exactly
    that many bytes of request body go up, then nothing more from the client.
    """
    scope = anyio.CancelScope(deadline=anyio.current_time() + IDLE_TIMEOUT)

    def moved() -> None:
        scope.deadline = anyio.current_time() + IDLE_TIMEOUT

    async def up() -> None:
        with _ending(group):
            await _up(client, upstream, rest, body, moved)

    async def down() -> None:
        with _ending(group):
            while chunk := await upstream.read(CHUNK):
                await client.send(chunk)
                moved()
        group.cancel_scope.cancel()

    with scope:
        async with anyio.create_task_group() as group:
            group.start_soon(up)
            group.start_soon(down)


async def _up(
    client: anyio.abc.SocketStream,
    upstream: httpcore.AsyncNetworkStream,
    rest: bytes,
    body: int | None,
    moved: Callable[[], None],
) -> None:
    left = body
    chunk = rest if left is None else rest[:left]
    while True:
        if chunk:
            await upstream.write(chunk)
            moved()
        if left is not None:
            left -= len(chunk)
            if left <= 0:
                return
        try:
            chunk = await client.receive(CHUNK if left is None else min(CHUNK, left))
        except anyio.EndOfStream:
            return


@contextlib.contextmanager
def _ending(group: anyio.abc.TaskGroup) -> Iterator[None]:
    """A broken side ends the whole tunnel (not an error: one party hung up)."""
    try:
        yield
    except (anyio.BrokenResourceError, anyio.ClosedResourceError, httpcore.NetworkError, OSError):
        group.cancel_scope.cancel()


@contextlib.asynccontextmanager
async def closing(
    stream: httpcore.AsyncNetworkStream,
) -> AsyncIterator[httpcore.AsyncNetworkStream]:
    try:
        yield stream
    finally:
        with anyio.CancelScope(shield=True):
            await stream.aclose()
