"""The browser's netguard proxy on its own (no browser): every request judged before any dial,
refusals answered 403 and reported, the judged address dialled (not the name again), CONNECT
tunnelled, malformed requests refused, open tunnels ended by close()."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator, Iterator, Sequence

import anyio
import pytest

from tests.tools.browser.site import Site, serve
from yagent.kernel.confine import netguard
from yagent.kernel.confine.netguard import Allow, IPAddress
from yagent.tools.browser.proxy import (
    MAX_HEAD,
    BadRequestError,
    GuardedProxy,
    Refusal,
    origin_request,
    parse_head,
    target_url,
)

LOOPBACK = Allow(loopback=True)


class FakeResolver:
    """Answers fixed addresses for names, so no test ever asks real DNS."""

    def __init__(self, answers: dict[str, list[str]]) -> None:
        self.answers = answers
        self.asked: list[str] = []

    async def resolve(self, host: str, port: int) -> Sequence[str | IPAddress]:
        self.asked.append(host)
        return self.answers.get(host, [])


@pytest.fixture
def site() -> Iterator[Site]:
    with serve() as s:
        yield s


class Running:
    def __init__(self, proxy: GuardedProxy, refusals: list[Refusal]) -> None:
        self.proxy = proxy
        self.refusals = refusals

    async def exchange(self, data: bytes, *, then: bytes = b"") -> bytes:
        reader, writer = await asyncio.open_connection("127.0.0.1", self.proxy.port)
        try:
            writer.write(data)
            await writer.drain()
            if then:
                status = await reader.readuntil(b"\r\n\r\n")
                writer.write(then)
                await writer.drain()
                with anyio.fail_after(10):
                    return status + await reader.read(-1)
            with anyio.fail_after(10):
                return await reader.read(-1)
        finally:
            writer.close()


async def _running(allow: Allow, resolver: FakeResolver | None = None) -> Running:
    refusals: list[Refusal] = []
    proxy = GuardedProxy(netguard.Guard(resolver or FakeResolver({})), allow, refusals.append)
    await proxy.start()
    return Running(proxy, refusals)


@pytest.fixture
async def loopback_proxy() -> AsyncIterator[Running]:
    running = await _running(LOOPBACK)
    yield running
    await running.proxy.close()


def _closed_port() -> int:
    """A loopback port with nothing listening (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _get(url: str, host: str = "x") -> bytes:
    return f"GET {url} HTTP/1.1\r\nHost: {host}\r\nProxy-Connection: keep-alive\r\n\r\n".encode()


@pytest.mark.anyio
async def test_an_allowed_request_is_forwarded(loopback_proxy: Running, site: Site) -> None:
    answer = await loopback_proxy.exchange(_get(site.url("/other?q=1")))
    assert answer.startswith(b"HTTP/1.0 200")
    assert b"the other page" in answer
    assert site.hits["/other"] == 1
    assert loopback_proxy.refusals == []


@pytest.mark.anyio
async def test_a_refused_request_is_answered_403_and_reported(loopback_proxy: Running) -> None:
    answer = await loopback_proxy.exchange(_get("http://169.254.169.254/latest/meta-data/"))
    assert answer.startswith(b"HTTP/1.1 403 Forbidden")
    assert b"blocked by netguard" in answer
    [refusal] = loopback_proxy.refusals
    assert refusal.url == "http://169.254.169.254/latest/meta-data/"
    assert refusal.layer == "address"
    assert "169.254.169.254" in refusal.reason


@pytest.mark.anyio
async def test_strict_allow_refuses_loopback(site: Site) -> None:
    running = await _running(Allow())
    try:
        answer = await running.exchange(_get(site.url("/other")))
    finally:
        await running.proxy.close()
    assert answer.startswith(b"HTTP/1.1 403")
    assert site.hits["/other"] == 0, "a refused request never reaches the server"


@pytest.mark.anyio
async def test_the_judged_address_is_dialled_not_the_name(site: Site) -> None:
    resolver = FakeResolver({"example.com": ["127.0.0.1"], "evil.example": ["169.254.169.254"]})
    running = await _running(LOOPBACK, resolver)
    try:
        # example.com resolves (for this guard) to loopback; the system would say otherwise
        answer = await running.exchange(_get(f"http://example.com:{site.port}/other"))
        refused = await running.exchange(_get("http://evil.example/"))
    finally:
        await running.proxy.close()
    assert b"the other page" in answer
    assert refused.startswith(b"HTTP/1.1 403")
    assert resolver.asked == ["example.com", "evil.example"]


@pytest.mark.anyio
async def test_connect_is_judged_then_tunnelled(loopback_proxy: Running, site: Site) -> None:
    connect = f"CONNECT 127.0.0.1:{site.port} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode()
    inner = b"GET /other HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    answer = await loopback_proxy.exchange(connect, then=inner)
    assert answer.startswith(b"HTTP/1.1 200 Connection Established\r\n\r\nHTTP/1.0 200")
    assert b"the other page" in answer
    refused = await loopback_proxy.exchange(b"CONNECT 169.254.169.254:443 HTTP/1.1\r\n\r\n")
    assert refused.startswith(b"HTTP/1.1 403")
    assert loopback_proxy.refusals[-1].url == "https://169.254.169.254:443/"


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("request_bytes", "status"),
    [
        (b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", b"400"),  # origin-form: not a proxy request
        (b"GARBAGE\r\n\r\n", b"400"),
        (b"GET http://a/ HTTP/2\r\n\r\n", b"400"),
        (b"GET http://a/ HTTP/1.1\r\nno colon here\r\n\r\n", b"400"),
        (b"CONNECT example.com HTTP/1.1\r\n\r\n", b"400"),  # no port
        (b"CONNECT a:1/x HTTP/1.1\r\n\r\n", b"400"),
        (b"GET http://a/ HTTP/1.1\r\nX: " + b"y" * MAX_HEAD + b"\r\n\r\n", b"431"),
    ],
)
async def test_malformed_requests_are_refused(
    loopback_proxy: Running, request_bytes: bytes, status: bytes
) -> None:
    answer = await loopback_proxy.exchange(request_bytes)
    assert answer.split(b" ")[1] == status
    assert loopback_proxy.refusals == []


@pytest.mark.anyio
async def test_an_unreachable_upstream_is_502(loopback_proxy: Running) -> None:
    answer = await loopback_proxy.exchange(_get(f"http://127.0.0.1:{_closed_port()}/"))
    assert answer.startswith(b"HTTP/1.1 502")


@pytest.mark.anyio
async def test_close_ends_open_tunnels(site: Site) -> None:
    running = await _running(LOOPBACK)
    reader, writer = await asyncio.open_connection("127.0.0.1", running.proxy.port)
    writer.write(f"CONNECT 127.0.0.1:{site.port} HTTP/1.1\r\n\r\n".encode())
    await writer.drain()
    assert (await reader.readuntil(b"\r\n\r\n")).startswith(b"HTTP/1.1 200")
    with anyio.fail_after(10):
        await running.proxy.close()
        assert await reader.read(-1) == b"", "the tunnel was closed"
    writer.close()
    await running.proxy.close()  # idempotent


@pytest.mark.anyio
async def test_a_client_that_leaves_mid_head_is_forgotten(loopback_proxy: Running) -> None:
    _, writer = await asyncio.open_connection("127.0.0.1", loopback_proxy.proxy.port)
    writer.write(b"GET http://a/ HTTP/1.1\r\n")
    writer.close()
    await writer.wait_closed()
    with anyio.fail_after(10):
        await asyncio.gather(*loopback_proxy.proxy._tasks)
    assert not loopback_proxy.proxy._tasks
    assert loopback_proxy.refusals == []


def test_head_parsing_and_rewriting() -> None:
    head = parse_head(
        b"get http://h:8/p/a?x=1#f HTTP/1.1\r\nHost: h:8\r\nProxy-Connection: keep-alive\r\n"
        b"Connection: keep-alive\r\nKeep-Alive: 5\r\nAccept: */*\r\n\r\n"
    )
    assert head.method == "GET"
    assert target_url(head) == "http://h:8/p/a?x=1#f"
    forwarded = origin_request(head).decode()
    assert forwarded.startswith("GET /p/a?x=1 HTTP/1.1\r\n")
    assert "Host: h:8\r\n" in forwarded
    assert "Accept: */*\r\n" in forwarded
    assert "keep-alive" not in forwarded.lower()
    assert forwarded.endswith("Connection: close\r\n\r\n")
    bare = parse_head(b"GET http://h HTTP/1.1\r\n\r\n")
    assert origin_request(bare).startswith(b"GET / HTTP/1.1\r\n")
    with pytest.raises(BadRequestError):
        parse_head(b"GET http://h HTTP/1.1\r\n : bad\r\n\r\n")
