"""Benchmark: what the egress proxy costs a sandboxed command's network traffic.

Figures (one JSON line each; median of several runs, all on loopback in one process):
- egress_direct_rps: HTTP/1.1 requests per second straight to a loopback origin (a new
  connection each, `Connection: close`) — the baseline;
- egress_proxy_rps: the same requests through the proxy's unix socket (absolute-URI form): the
  allow-list, netguard's judgement with one resolution, the dial of the judged address, the
  rebuilt request — with `ratio_to_direct` (the share of direct throughput that remains);
- egress_tunnel_mbps / egress_direct_mbps: bytes echoed through a CONNECT tunnel vs straight to
  the echo server (64 KiB chunks, 16 MiB), with `ratio_to_direct`.
The bridge inside the sandbox adds one more loopback hop per connection; it is not measured here
(it needs bwrap), so the figures are the proxy's share of the cost. asyncio may log an
"InvalidStateError" from anyio's unix socket stream when the proxy closes with a tunnel still
open (an anyio race on a cancelled receive); it does not affect the figures.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import statistics
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from pathlib import Path

import anyio
import anyio.abc

from yagent.kernel.confine import netguard
from yagent.tools.egress.allowlist import AllowList
from yagent.tools.egress.proxyserver import EgressProxy

RUNS = 5
REQUESTS = 300
CHUNK = 64 * 1024
TUNNEL_BYTES = 16 * 1024 * 1024


class Loopback:
    async def resolve(self, host: str, port: int) -> Sequence[str]:
        return ["127.0.0.1"]


async def _read_all(stream: anyio.abc.ByteReceiveStream) -> bytes:
    out = b""
    with contextlib.suppress(anyio.EndOfStream, anyio.BrokenResourceError):
        while True:
            out += await stream.receive()
    return out


@contextlib.asynccontextmanager
async def origin() -> AsyncIterator[tuple[int, int]]:
    http = await anyio.create_tcp_listener(local_host="127.0.0.1")
    echo = await anyio.create_tcp_listener(local_host="127.0.0.1")

    async def answer(stream: anyio.abc.SocketStream) -> None:
        async with stream:
            with contextlib.suppress(anyio.EndOfStream, anyio.BrokenResourceError):
                head = b""
                while b"\r\n\r\n" not in head:
                    head += await stream.receive()
                await stream.send(
                    b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"
                )

    async def reflect(stream: anyio.abc.SocketStream) -> None:
        async with stream:
            with contextlib.suppress(anyio.EndOfStream, anyio.BrokenResourceError):
                while True:
                    await stream.send(await stream.receive())

    async with anyio.create_task_group() as group:
        group.start_soon(http.serve, answer)
        group.start_soon(echo.serve, reflect)
        yield (
            http.extra(anyio.abc.SocketAttribute.local_port),
            echo.extra(anyio.abc.SocketAttribute.local_port),
        )
        group.cancel_scope.cancel()


async def _rate(op: Callable[[], Awaitable[None]], n: int) -> float:
    start = time.perf_counter()
    for _ in range(n):
        await op()
    return n / (time.perf_counter() - start)


async def _echo(stream: anyio.abc.ByteStream) -> None:
    chunk = b"x" * CHUNK
    for _ in range(TUNNEL_BYTES // CHUNK):
        await stream.send(chunk)
        got = 0
        while got < CHUNK:
            got += len(await stream.receive())


def figure(name: str, value: float, unit: str, **extra: object) -> None:
    print(json.dumps({"name": name, "value": round(value, 1), "unit": unit, **extra}))


async def main() -> None:
    directory = Path(tempfile.mkdtemp(prefix="eb-", dir="/tmp"))
    try:
        async with origin() as (http_port, echo_port):
            hosts = AllowList.parse([f"origin.test:{http_port}", f"origin.test:{echo_port}"])
            proxy = EgressProxy(
                hosts,
                directory=directory,
                guard=netguard.Guard(Loopback()),
                opening=netguard.Allow(loopback=True),  # the origin lives on loopback
            )
            async with proxy:
                request = b"GET / HTTP/1.1\r\nHost: origin.test\r\nConnection: close\r\n\r\n"
                absolute = (
                    f"GET http://origin.test:{http_port}/ HTTP/1.1\r\n"
                    f"Host: origin.test:{http_port}\r\n\r\n"
                ).encode()

                async def direct() -> None:
                    async with await anyio.connect_tcp("127.0.0.1", http_port) as s:
                        await s.send(request)
                        assert (await _read_all(s)).endswith(b"ok")

                async def proxied() -> None:
                    async with await anyio.connect_unix(proxy.socket_path) as s:
                        await s.send(absolute)
                        await s.send_eof()
                        assert (await _read_all(s)).endswith(b"ok")

                async def tunnel_direct() -> None:
                    async with await anyio.connect_tcp("127.0.0.1", echo_port) as s:
                        await _echo(s)

                async def tunnel_proxied() -> None:
                    async with await anyio.connect_unix(proxy.socket_path) as s:
                        target = f"origin.test:{echo_port}"
                        await s.send(
                            f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n".encode()
                        )
                        head = b""
                        while b"\r\n\r\n" not in head:
                            head += await s.receive()
                        assert head.startswith(b"HTTP/1.1 200"), head
                        await _echo(s)

                await _rate(direct, 50)
                await _rate(proxied, 50)  # warm-up
                base = statistics.median([await _rate(direct, REQUESTS) for _ in range(RUNS)])
                via = statistics.median([await _rate(proxied, REQUESTS) for _ in range(RUNS)])
                figure("egress_direct_rps", base, "requests/s")
                figure("egress_proxy_rps", via, "requests/s", ratio_to_direct=round(via / base, 3))
                mb = TUNNEL_BYTES / 1e6
                plain = statistics.median([mb * await _rate(tunnel_direct, 1) for _ in range(3)])
                tunneled = statistics.median(
                    [mb * await _rate(tunnel_proxied, 1) for _ in range(3)]
                )
                figure("egress_direct_mbps", plain, "MB/s")
                figure(
                    "egress_tunnel_mbps",
                    tunneled,
                    "MB/s",
                    ratio_to_direct=round(tunneled / plain, 3),
                )
    finally:
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    anyio.run(main)
