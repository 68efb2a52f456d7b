"""Real parts for the egress tests: loopback HTTP and echo servers on the host, a fixed resolver
(names → addresses, as a DNS server would answer), the real proxy on a short unix socket path,
and a raw client that speaks to it."""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import anyio.abc

from yagent.kernel.confine import netguard
from yagent.tools.egress.allowlist import AllowList
from yagent.tools.egress.proxyserver import EgressProxy

LOOPBACK = netguard.Allow(loopback=True)  # the test servers live on loopback: opened for tests only


class FixedResolver:
    """Answers from a table; an unknown name fails resolution (netguard refuses it)."""

    def __init__(self, table: Mapping[str, Sequence[str]]) -> None:
        self.table = dict(table)
        self.asked: list[str] = []

    async def resolve(self, host: str, port: int) -> Sequence[str]:
        self.asked.append(host)
        return self.table[host]


@dataclass
class Servers:
    http_port: int
    echo_port: int
    seen: list[bytes] = field(default_factory=list)  # every request (head + body) the origin got


async def _read_request(stream: anyio.abc.ByteStream) -> bytes:
    data = b""
    while b"\r\n\r\n" not in data:
        data += await stream.receive()
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    with anyio.move_on_after(0.5):  # a body announced but not sent must not hang the server
        while len(body) < length:
            body += await stream.receive()
    return head + b"\r\n\r\n" + body


@contextlib.asynccontextmanager
async def servers() -> AsyncIterator[Servers]:
    """An HTTP origin (answers `hello <request line>`) and a TCP echo server, both on loopback."""
    http = await anyio.create_tcp_listener(local_host="127.0.0.1")
    echo = await anyio.create_tcp_listener(local_host="127.0.0.1")
    found = Servers(
        http.extra(anyio.abc.SocketAttribute.local_port),
        echo.extra(anyio.abc.SocketAttribute.local_port),
    )

    async def answer(stream: anyio.abc.SocketStream) -> None:
        async with stream:
            with contextlib.suppress(anyio.EndOfStream, anyio.BrokenResourceError):
                request = await _read_request(stream)
                found.seen.append(request)
                body = b"hello " + request.split(b"\r\n", 1)[0]
                head = b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n" % len(body)
                await stream.send(head + b"Connection: close\r\n\r\n" + body)

    async def reflect(stream: anyio.abc.SocketStream) -> None:
        async with stream:
            with contextlib.suppress(anyio.EndOfStream, anyio.BrokenResourceError):
                while True:
                    await stream.send(await stream.receive())

    async with anyio.create_task_group() as group:
        group.start_soon(http.serve, answer)
        group.start_soon(echo.serve, reflect)
        yield found
        group.cancel_scope.cancel()


@contextlib.contextmanager
def short_dir() -> Iterable[Path]:
    """A private directory with a path short enough for a unix socket, under the masked /tmp."""
    path = Path(tempfile.mkdtemp(prefix="eg-", dir="/tmp"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def proxy_for(
    entries: Iterable[str],
    resolver: FixedResolver,
    directory: Path | None = None,
    opening: netguard.Allow = LOOPBACK,
    **kwargs: object,
) -> EgressProxy:
    guard = netguard.Guard(resolver)
    return EgressProxy(
        AllowList.parse(entries),
        directory=directory,
        guard=guard,
        opening=opening,
        **kwargs,  # type: ignore[arg-type]
    )


async def ask(proxy: EgressProxy, raw: bytes, *, eof: bool = True) -> bytes:
    """Send `raw` (then end our side, unless not `eof`) to the proxy; read all it answers."""
    with anyio.fail_after(20):  # a hang guard only
        async with await anyio.connect_unix(proxy.socket_path) as stream:
            await stream.send(raw)
            if eof:
                await stream.send_eof()
            return await read_all(stream)


async def read_all(stream: anyio.abc.ByteReceiveStream) -> bytes:
    out = b""
    with contextlib.suppress(anyio.EndOfStream, anyio.BrokenResourceError):
        while True:
            out += await stream.receive()
    return out


def status(reply: bytes) -> int:
    return int(reply.split(b" ", 2)[1])


def body(reply: bytes) -> bytes:
    return reply.partition(b"\r\n\r\n")[2]
