"""The guarded transport: real httpx client, real local servers, connect-time judgement."""

from __future__ import annotations

import typing
from urllib.parse import quote

import httpcore
import httpx
import pytest

from yagent.kernel.confine.netguard import (
    AddressBlockedError,
    Allow,
    BlockedError,
    Guard,
    GuardedBackend,
    GuardedTransport,
    NameBlockedError,
    PeerBlockedError,
    Phase,
    Policy,
    PolicyStore,
    SchemeBlockedError,
    URLBlockedError,
    check,
    new_client,
)

from .conftest import PUBLIC, LocalServer, MapResolver, Recorder, SequenceResolver


def redirect(server: LocalServer, to: str) -> str:
    return server.url("/redirect?to=" + quote(to, safe=""))


@pytest.mark.anyio
async def test_strict_client_never_dials_loopback(server: LocalServer) -> None:
    rec = Recorder()
    async with new_client(network_backend=rec) as client:
        with pytest.raises(AddressBlockedError):
            await client.get(server.url())
    assert rec.dials == []
    assert server.hits == []


@pytest.mark.anyio
async def test_named_origin_reaches_the_local_server(server: LocalServer) -> None:
    rec = Recorder()
    opened = Allow(hosts=frozenset({f"127.0.0.1:{server.port}"}))
    async with new_client(opened, network_backend=rec) as client:
        response = await client.get(server.url())
    assert response.text == "ok"
    assert rec.dials == [("127.0.0.1", server.port)]


@pytest.mark.anyio
async def test_name_is_resolved_once_and_the_judged_ip_is_dialled(server: LocalServer) -> None:
    # The second answer would be private; the dial must use the first, judged answer only.
    resolver = SequenceResolver([["127.0.0.1"], ["10.9.9.9"]])
    rec = Recorder()
    opened = Allow(hosts=frozenset({"svc.example"}))
    async with new_client(opened, resolver=resolver, network_backend=rec) as client:
        response = await client.get(f"http://svc.example:{server.port}/ok")
    assert response.status_code == 200
    assert resolver.calls == 1
    assert rec.dials == [("127.0.0.1", server.port)]
    assert server.hits == [("/ok", f"svc.example:{server.port}")]  # original Host header kept


@pytest.mark.anyio
async def test_dns_rebinding_second_lookup_never_reaches_private(server: LocalServer) -> None:
    # The attacker's DNS answers public to the check and loopback to the client's lookup.
    resolver = SequenceResolver([[PUBLIC], ["127.0.0.1"]])
    url = f"http://rebind.example:{server.port}/ok"
    checked = await check(url, resolver=resolver)  # the up-front check is fooled...
    assert checked.addresses[0].exploded == PUBLIC
    rec = Recorder()
    async with new_client(resolver=resolver, network_backend=rec) as client:
        with pytest.raises(AddressBlockedError) as info:
            await client.get(url)  # ...the dial is not.
    assert info.value.phase is Phase.CONNECT
    assert info.value.address == "127.0.0.1"
    assert rec.dials == []
    assert server.hits == []


@pytest.mark.anyio
async def test_real_peer_is_verified(server: LocalServer) -> None:
    # A backend that lands somewhere else than the judged address is caught before any byte.
    rec = Recorder(redirect_to=("127.0.0.1", server.port))
    resolver = MapResolver({"public.example": [PUBLIC]})
    async with new_client(resolver=resolver, network_backend=rec) as client:
        with pytest.raises(PeerBlockedError, match="not the judged"):
            await client.get(f"http://public.example:{server.port}/ok")
    assert rec.dials == [(PUBLIC, server.port)]
    assert server.hits == []


class _Blind(httpcore.AsyncNetworkStream):
    closed = False

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:  # noqa: ASYNC109
        return b""

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:  # noqa: ASYNC109
        raise AssertionError("nothing may be sent")

    async def aclose(self) -> None:
        self.closed = True

    def get_extra_info(self, info: str) -> typing.Any:
        return None


class _BlindBackend(Recorder):
    def __init__(self) -> None:
        super().__init__()
        self.stream = _Blind()

    async def connect_tcp(
        self, host: str, port: int, *args: typing.Any, **kw: typing.Any
    ) -> httpcore.AsyncNetworkStream:
        self.dials.append((host, port))
        return self.stream


@pytest.mark.anyio
async def test_unknown_peer_fails_closed() -> None:
    backend = _BlindBackend()
    async with new_client(network_backend=backend) as client:
        with pytest.raises(PeerBlockedError, match="cannot read"):
            await client.get("http://8.8.8.8/")
    assert backend.stream.closed


class _Socketed(_Blind):
    def get_extra_info(self, info: str) -> typing.Any:
        class Sock:
            def getpeername(self) -> tuple[str, int]:
                return ("10.0.0.1", 80)

        return Sock() if info == "socket" else None


@pytest.mark.anyio
async def test_peer_read_from_the_socket_when_no_server_addr() -> None:
    backend = _BlindBackend()
    backend.stream = _Socketed()
    async with new_client(network_backend=backend) as client:
        with pytest.raises(PeerBlockedError, match=r"10\.0\.0\.1"):
            await client.get("http://8.8.8.8/")
    assert backend.stream.closed


@pytest.mark.anyio
async def test_sni_and_certificate_name_stay_the_url_host(server: LocalServer) -> None:
    seen: list[str | None] = []

    class Spy(Recorder):
        async def connect_tcp(
            self, host: str, port: int, *a: typing.Any, **k: typing.Any
        ) -> httpcore.AsyncNetworkStream:
            stream = await super().connect_tcp(host, port, *a, **k)
            original = stream.start_tls

            async def start_tls(
                ssl_context: typing.Any,
                server_hostname: str | None = None,
                timeout: float | None = None,  # noqa: ASYNC109 - httpcore's stream signature
            ) -> httpcore.AsyncNetworkStream:
                seen.append(server_hostname)
                return await original(ssl_context, server_hostname, timeout)

            stream.start_tls = start_tls  # type: ignore[method-assign]
            return stream

    resolver = MapResolver({"svc.example": ["127.0.0.1"]})
    opened = Allow(hosts=frozenset({"svc.example"}))
    async with new_client(opened, resolver=resolver, network_backend=Spy(), timeout=5) as client:
        with pytest.raises(httpx.ConnectError):  # the local server speaks plain HTTP
            await client.get(f"https://svc.example:{server.port}/ok")
    assert seen == ["svc.example"]


@pytest.mark.anyio
async def test_failed_dial_tries_the_next_judged_address(server: LocalServer) -> None:
    class FirstFails(Recorder):
        async def connect_tcp(
            self, host: str, port: int, *a: typing.Any, **k: typing.Any
        ) -> httpcore.AsyncNetworkStream:
            if not self.dials:
                self.dials.append((host, port))
                raise httpcore.ConnectError("refused")
            return await super().connect_tcp(host, port, *a, **k)

    resolver = MapResolver({"svc.example": ["127.0.0.2", "127.0.0.1"]})
    rec = FirstFails()
    async with new_client(Allow(loopback=True), resolver=resolver, network_backend=rec) as client:
        assert (await client.get(f"http://svc.example:{server.port}/ok")).text == "ok"
    assert rec.dials == [("127.0.0.2", server.port), ("127.0.0.1", server.port)]


@pytest.mark.anyio
async def test_all_dials_failing_is_a_connect_error() -> None:
    resolver = MapResolver({"x.example": [PUBLIC]})
    async with new_client(resolver=resolver, network_backend=Recorder(live=False)) as client:
        with pytest.raises(httpx.ConnectError):
            await client.get("http://x.example/")


@pytest.mark.anyio
async def test_slow_resolution_is_a_connect_timeout() -> None:
    import anyio

    class Slow:
        async def resolve(self, host: str, port: int) -> list[str]:
            await anyio.sleep(30)
            return [PUBLIC]

    async with new_client(
        resolver=Slow(), network_backend=Recorder(live=False), timeout=0.05
    ) as client:
        with pytest.raises(httpx.ConnectTimeout):
            await client.get("http://slow.example/")


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("target", "error"),
    [
        ("http://10.0.0.1/", AddressBlockedError),
        ("http://169.254.169.254/latest/meta-data/", AddressBlockedError),
        ("http://[::1]:{port}/ok", AddressBlockedError),
        ("http://127.0.0.1:{other}/ok", AddressBlockedError),
        ("http://localhost:{port}/ok", NameBlockedError),
        ("http://2130706433:{port}/ok", NameBlockedError),
        ("http://metadata.google.internal/", NameBlockedError),
        ("file:///etc/passwd", SchemeBlockedError),
        ("gopher://127.0.0.1:6379/_INFO", SchemeBlockedError),
        ("http://rebind.example:{port}/ok", AddressBlockedError),
    ],
)
async def test_redirect_into_private_space_is_refused(
    server: LocalServer, other_server: LocalServer, target: str, error: type[BlockedError]
) -> None:
    # Only the first hop (this server's origin) is opened; the redirect target is not.
    rec = Recorder()
    resolver = MapResolver({"rebind.example": ["127.0.0.1"]})
    opened = Allow(hosts=frozenset({f"127.0.0.1:{server.port}"}))
    to = target.format(port=server.port, other=other_server.port)
    async with new_client(opened, resolver=resolver, network_backend=rec) as client:
        with pytest.raises((error, httpx.UnsupportedProtocol)):
            await client.get(redirect(server, to))
    assert rec.dials == [("127.0.0.1", server.port)]
    assert [path for path, _ in server.hits] == [f"/redirect?to={quote(to, safe='')}"]
    assert other_server.hits == []


@pytest.mark.anyio
async def test_loopback_allow_does_not_follow_into_private_or_metadata(server: LocalServer) -> None:
    rec = Recorder()
    async with new_client(Allow(loopback=True), network_backend=rec) as client:
        for to in ("http://192.168.1.1/", "http://169.254.169.254/", "http://[fd00::1]/"):
            with pytest.raises(AddressBlockedError):
                await client.get(redirect(server, to))
        ok = await client.get(redirect(server, server.url("/ok")))
    assert ok.text == "ok"
    assert {host for host, _ in rec.dials} == {"127.0.0.1"}


@pytest.mark.anyio
async def test_nested_redirects_are_judged_hop_by_hop(server: LocalServer) -> None:
    rec = Recorder()
    inner = "/redirect?to=" + quote("http://10.0.0.1/", safe="")
    async with new_client(Allow(loopback=True), network_backend=rec) as client:
        with pytest.raises(AddressBlockedError):
            await client.get(redirect(server, inner))
        response = await client.get(redirect(server, "/ok"))  # relative redirect, same origin
    assert response.text == "ok"
    assert len(response.history) == 1
    assert {host for host, _ in rec.dials} == {"127.0.0.1"}


@pytest.mark.anyio
async def test_policy_swap_applies_to_the_next_request(server: LocalServer) -> None:
    store = PolicyStore()
    resolver = MapResolver({"svc.example": ["127.0.0.1"]})
    opened = Allow(loopback=True)
    async with new_client(opened, resolver=resolver, policy=store) as client:
        url = f"http://svc.example:{server.port}/ok"
        assert (await client.get(url)).text == "ok"
        store.swap(Policy(blocked=("svc.example",)))
        with pytest.raises(NameBlockedError):
            await client.get(url)  # refused at the request screen, even with a pooled connection


@pytest.mark.anyio
async def test_backend_refuses_unix_sockets_and_judges_dial_names() -> None:
    backend = GuardedBackend(Guard(MapResolver({})))
    with pytest.raises(URLBlockedError):
        await backend.connect_unix_socket("/var/run/docker.sock")
    with pytest.raises(NameBlockedError):
        await backend.connect_tcp("localhost", 80)
    with pytest.raises(NameBlockedError):
        await backend.connect_tcp("127.1", 80)
    with pytest.raises(AddressBlockedError):
        await backend.connect_tcp("::ffff:127.0.0.1", 80)
    await backend.sleep(0)


@pytest.mark.anyio
async def test_transport_ignores_proxy_environment(
    monkeypatch: pytest.MonkeyPatch, server: LocalServer
) -> None:
    monkeypatch.setenv("HTTP_PROXY", server.url(""))
    monkeypatch.setenv("ALL_PROXY", server.url(""))
    rec = Recorder(live=False)
    resolver = MapResolver({"x.example": [PUBLIC]})
    async with new_client(resolver=resolver, network_backend=rec) as client:
        with pytest.raises(httpx.ConnectError):
            await client.get("http://x.example/")
    assert rec.dials == [(PUBLIC, 80)]
    assert server.hits == []


@pytest.mark.anyio
async def test_transport_usable_on_its_own(server: LocalServer) -> None:
    transport = GuardedTransport(Allow(loopback=True), http2=False, retries=1)
    async with transport, httpx.AsyncClient(transport=transport) as client:
        assert (await client.get(server.url())).text == "ok"
        with pytest.raises(AddressBlockedError):
            await client.get("http://10.0.0.1/")
