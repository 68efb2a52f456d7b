"""The egress proxy, for real: its unix socket, netguard's dial, loopback origins on the host."""

from __future__ import annotations

import os
import stat
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest

from yagent.kernel.confine import egress
from yagent.kernel.confine.sandbox import EgressMode
from yagent.tools.egress import proxyserver, wire
from yagent.tools.egress.allowlist import AllowList
from yagent.tools.egress.proxyserver import EgressDecision, EgressProxy, ProxyError

from .egresskit import FixedResolver, Servers, ask, body, proxy_for, short_dir, status

pytestmark = pytest.mark.anyio

NAMES = {
    "allowed.test": ["127.0.0.1"],
    "other.test": ["127.0.0.1"],
    "private.test": ["10.20.30.40"],
    "mixed.test": ["127.0.0.1", "192.168.1.9"],
}


@pytest.fixture
async def proxy(origin: Servers) -> AsyncIterator[EgressProxy]:
    entries = [
        f"allowed.test:{origin.http_port}",
        f"allowed.test:{origin.echo_port}",
        f"private.test:{origin.http_port}",
        f"mixed.test:{origin.http_port}",
    ]
    with short_dir() as where:
        async with proxy_for(entries, FixedResolver(NAMES), where) as running:
            yield running


def get(url: str, *headers: str) -> bytes:
    lines = [f"GET {url} HTTP/1.1", *headers, "", ""]
    return "\r\n".join(lines).encode()


async def test_an_allowed_url_is_fetched_in_origin_form(
    proxy: EgressProxy, origin: Servers
) -> None:
    url = f"http://allowed.test:{origin.http_port}/simple/pip/?q=1#frag"
    reply = await ask(proxy, get(url, "Host: evil.example", "Proxy-Authorization: x", "X-A: b"))
    assert status(reply) == 200
    assert body(reply) == b"hello GET /simple/pip/?q=1 HTTP/1.1"
    head = origin.seen[0].decode()
    assert f"\r\nHost: allowed.test:{origin.http_port}\r\n" in head, "Host comes from the URL"
    assert "evil.example" not in head
    assert "proxy-authorization" not in head.lower()
    assert "x-a: b" in head.lower()
    assert "Connection: close" in head
    assert proxy.decisions == (
        EgressDecision("GET", "allowed.test", origin.http_port, True, "allow-listed"),
    )


async def test_a_host_off_the_list_is_refused_before_any_dial(
    proxy: EgressProxy, origin: Servers
) -> None:
    reply = await ask(proxy, get(f"http://other.test:{origin.http_port}/"))
    assert status(reply) == 403
    assert (
        body(reply) == f"other.test:{origin.http_port} is not on the egress allow-list\n".encode()
    )
    assert origin.seen == []
    assert proxy.counts == proxyserver.Counts(allowed=0, refused=1)


async def test_a_listed_host_on_another_port_is_refused(
    proxy: EgressProxy, origin: Servers
) -> None:
    reply = await ask(proxy, get("http://allowed.test/"))  # port 80 is not listed here
    assert status(reply) == 403
    assert origin.seen == []


@pytest.mark.parametrize("name", ["private.test", "mixed.test"])
async def test_a_listed_name_resolving_to_private_space_is_refused(
    proxy: EgressProxy, origin: Servers, name: str
) -> None:
    reply = await ask(proxy, get(f"http://{name}:{origin.http_port}/"))
    assert status(reply) == 403
    assert body(reply).startswith(b"refused by netguard: RFC 1918 private"), body(reply)
    assert b"(10.20.30.40)" in body(reply) or b"(192.168.1.9)" in body(reply)
    assert origin.seen == []


async def test_netguard_judges_even_a_reachable_listed_host(origin: Servers) -> None:
    # The origin is really there: without the opening for loopback, only netguard stands between
    # an allow-listed name that resolves to 127.0.0.1 and the host's own services.
    resolver = FixedResolver({"sneaky.test": ["127.0.0.1"]})
    with short_dir() as where:
        async with proxy_for(
            [f"sneaky.test:{origin.http_port}", f"sneaky.test:{origin.echo_port}"],
            resolver,
            where,
            opening=proxyserver.netguard.STRICT,
        ) as strict:
            plain = await ask(strict, get(f"http://sneaky.test:{origin.http_port}/"))
            tunnel = await ask(
                strict, f"CONNECT sneaky.test:{origin.echo_port} HTTP/1.1\r\n\r\n".encode()
            )
    assert status(plain) == status(tunnel) == 403
    assert b"netguard" in body(plain)
    assert origin.seen == []
    assert resolver.asked == ["sneaky.test", "sneaky.test"], "one resolution per request"


async def test_connect_tunnels_bytes_both_ways(proxy: EgressProxy, origin: Servers) -> None:
    with anyio.fail_after(20):
        async with await anyio.connect_unix(proxy.socket_path) as stream:
            await stream.send(
                f"CONNECT allowed.test:{origin.echo_port} HTTP/1.1\r\n\r\nearly".encode()
            )
            got = b""
            while not got.endswith(b"early"):
                got += await stream.receive()
            assert got == b"HTTP/1.1 200 Connection established\r\n\r\nearly"
            for chunk in (b"ping", b"\x00\xff" * 40000):
                await stream.send(chunk)
                echoed = b""
                while len(echoed) < len(chunk):
                    echoed += await stream.receive()
                assert echoed == chunk
    assert proxy.counts.allowed == 1


async def test_connect_to_a_refused_host_gets_403(proxy: EgressProxy, origin: Servers) -> None:
    reply = await ask(proxy, f"CONNECT other.test:{origin.echo_port} HTTP/1.1\r\n\r\n".encode())
    assert status(reply) == 403
    assert b"not on the egress allow-list" in body(reply)
    assert proxy.decisions[-1].allowed is False
    assert proxy.decisions[-1].host == "other.test"


@pytest.mark.parametrize(
    ("raw", "code"),
    [
        (b"CONNECT allowed.test HTTP/1.1\r\n\r\n", 400),  # no port
        (b"GET /relative HTTP/1.1\r\n\r\n", 400),
        (b"GET https://allowed.test/ HTTP/1.1\r\n\r\n", 400),  # https goes by CONNECT
        (b"GET http://user@allowed.test/ HTTP/1.1\r\n\r\n", 403),  # netguard's strict URL reader
        (b"GET http://0x7f.1/ HTTP/1.1\r\n\r\n", 403),
        (b"BREW\r\n\r\n", 400),
        (b"GET http://allowed.test/ HTTP/1.1\r\nno colon\r\n\r\n", 400),
        (b"get http://allowed.test/ HTTP/1.1\r\n\r\n", 400),
        (b"POST http://allowed.test/ HTTP/1.1\r\nContent-Length: x\r\n\r\n", 400),
        (b"POST http://allowed.test/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", 411),
        (b"GET http://allowed.test/", 400),  # closed before the head ended
    ],
)
async def test_malformed_requests_are_refused(
    proxy: EgressProxy, origin: Servers, raw: bytes, code: int
) -> None:
    reply = await ask(proxy, raw)
    assert status(reply) == code
    assert body(reply).endswith(b"\n")
    assert body(reply).count(b"\n") == 1
    assert origin.seen == []
    assert proxy.counts.refused == 1


async def test_a_huge_head_is_refused_not_buffered(proxy: EgressProxy, origin: Servers) -> None:
    filler = "X-Pad: " + "a" * (wire.MAX_HEADER + 10)
    reply = await ask(proxy, get(f"http://allowed.test:{origin.http_port}/", filler))
    assert status(reply) == 431
    assert origin.seen == []


async def test_a_body_goes_by_content_length_and_nothing_rides_behind(
    proxy: EgressProxy, origin: Servers
) -> None:
    url = f"http://allowed.test:{origin.http_port}/upload"
    smuggled = b"GET / HTTP/1.1\r\nHost: other.test\r\n\r\n"
    raw = f"POST {url} HTTP/1.1\r\nContent-Length: 5\r\n\r\n".encode() + b"hello" + smuggled
    reply = await ask(proxy, raw)
    assert status(reply) == 200
    assert origin.seen[0].endswith(b"\r\n\r\nhello")
    assert len(origin.seen) == 1


async def test_an_unreachable_listed_port_is_a_502(origin: Servers) -> None:
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
    port = listener.extra(anyio.abc.SocketAttribute.local_port)
    await listener.aclose()  # nothing listens there now
    with short_dir() as where:
        async with proxy_for([f"allowed.test:{port}"], FixedResolver(NAMES), where) as running:
            reply = await ask(running, get(f"http://allowed.test:{port}/"))
    assert status(reply) == 502


async def test_a_slow_head_is_cut_off(
    proxy: EgressProxy, origin: Servers, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(proxyserver, "HEADER_TIMEOUT", 0.2)
    slow = b"GET http://allowed.test/ HTTP/1.1\r\nX-Slow: "  # never ends, never hangs up
    reply = await ask(proxy, slow, eof=False)
    assert status(reply) == 408


async def test_an_idle_tunnel_is_closed(
    proxy: EgressProxy, origin: Servers, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(wire, "IDLE_TIMEOUT", 0.2)
    reply = await ask(proxy, f"CONNECT allowed.test:{origin.echo_port} HTTP/1.1\r\n\r\n".encode())
    assert reply == b"HTTP/1.1 200 Connection established\r\n\r\n", "then closed, not held"


async def test_connections_over_the_bound_get_503(
    proxy: EgressProxy, origin: Servers, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(proxyserver, "MAX_TUNNELS", 1)
    with anyio.fail_after(20):
        async with await anyio.connect_unix(proxy.socket_path) as held:
            await held.send(f"CONNECT allowed.test:{origin.echo_port} HTTP/1.1\r\n\r\n".encode())
            assert (await held.receive()).startswith(b"HTTP/1.1 200")
            reply = await ask(proxy, get(f"http://allowed.test:{origin.http_port}/"))
            assert status(reply) == 503
            await held.send(b"still")
            assert await held.receive() == b"still"
    assert proxy.counts == proxyserver.Counts(allowed=1, refused=1)


async def test_decisions_are_kept_bounded_counted_and_observed(
    origin: Servers, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(proxyserver, "MAX_LOG", 2)
    seen: list[EgressDecision] = []
    with short_dir() as where:
        entries = [f"allowed.test:{origin.http_port}"]
        async with proxy_for(entries, FixedResolver(NAMES), where, observer=seen.append) as p:
            for name in ("other.test", "allowed.test", "other.test"):
                await ask(p, get(f"http://{name}:{origin.http_port}/"))
    assert [d.host for d in p.decisions] == ["allowed.test", "other.test"]
    assert p.counts == proxyserver.Counts(allowed=1, refused=2, dropped=1)
    assert [d.allowed for d in seen] == [False, True, False]


async def test_the_socket_is_private_and_gone_after_exit() -> None:
    proxy = EgressProxy(AllowList.parse(["pypi.org"]))
    assert not proxy.running
    async with proxy:
        directory = proxy.directory
        assert proxy.running
        assert str(directory).startswith(proxyserver.runtime_base() + "/")
        assert stat.S_IMODE(directory.stat().st_mode) == 0o700
        assert stat.S_IMODE(proxy.socket_path.stat().st_mode) == 0o600
        assert stat.S_ISSOCK(proxy.socket_path.stat().st_mode)
    assert not proxy.running
    assert not directory.exists()


async def test_a_given_directory_stays_and_loses_only_the_socket() -> None:
    with short_dir() as where:
        target = where / "proxy"
        async with EgressProxy(AllowList(), directory=target) as proxy:
            assert proxy.socket_path.exists()
            assert stat.S_IMODE(target.stat().st_mode) == 0o700
        assert target.is_dir()
        assert not (target / proxyserver.SOCKET_NAME).exists()


async def test_a_socket_path_too_long_is_refused_cleanly(tmp_path: Path) -> None:
    deep = tmp_path / ("d" * 120)
    with pytest.raises(ProxyError, match="too long"):
        async with EgressProxy(AllowList(), directory=deep):
            pass


def test_the_runtime_base_is_masked_and_private(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))  # not under /run: never used
    assert proxyserver.runtime_base() == "/tmp"
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.delenv("XDG_RUNTIME_DIR")
    assert proxyserver.runtime_base() == "/tmp", "TMPDIR may point anywhere"
    run = Path(f"/run/user/{os.getuid()}")
    if run.is_dir() and stat.S_IMODE(run.stat().st_mode) == 0o700:
        monkeypatch.setenv("XDG_RUNTIME_DIR", str(run))
        assert proxyserver.runtime_base() == str(run)


async def test_route_needs_a_running_proxy_and_writes_verified_variables() -> None:
    spec = egress.Spec(EgressMode.PROXY, ("pypi.org",), proxyserver.LOOPBACK_BYPASS)
    proxy = EgressProxy(AllowList.parse(["pypi.org"]))
    with pytest.raises(ProxyError, match="not running"):
        proxyserver.route(proxy, spec, {}, list)
    async with proxy:
        inherited = {"PATH": "/bin", "Https_Proxy": "http://elsewhere:1", "NO_PROXY": "*"}
        env, launcher = proxyserver.route(proxy, spec, inherited, lambda argv: ["box", *argv])
        socket_path = str(proxy.socket_path)
    with pytest.raises(ProxyError, match="serves once"):
        await proxy.__aenter__()
    url = f"http://127.0.0.1:{proxyserver.BRIDGE_PORT}"
    egress.verify(spec, env, url)
    assert env["PATH"] == "/bin"
    assert "Https_Proxy" not in env
    argv = launcher(["bash", "-c", "true"])
    assert argv[0] == "box"
    assert argv[2:5] == ["-I", "-m", "yagent.tools.egress.sandboxbridge"]
    assert argv[argv.index("--port") + 1] == str(proxyserver.BRIDGE_PORT)
    assert argv[argv.index("--socket") + 1] == socket_path
    assert argv[argv.index("--") + 1 :] == ["bash", "-c", "true"]
