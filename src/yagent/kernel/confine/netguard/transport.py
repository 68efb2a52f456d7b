"""netguard transport: the same judgement at the moment of the dial (closes DNS rebinding).

How the window is closed: `GuardedBackend` is the httpcore network backend of the pool. When the
pool opens a connection it hands us the URL's host; we run the name layer, resolve the name ONCE
through the guard's resolver, judge every address, and dial the judged IP literal itself — the
inner backend never resolves anything, so there is no second lookup an attacker's DNS could answer
differently. After the connect we read the socket's real peer address and refuse (closing the
socket before any byte is sent) unless it is exactly the judged address and still passes. TLS is
untouched: httpcore passes the URL host as SNI / certificate name, and the Host header comes from
the request, so virtual hosting and certificate checks work as without the guard. Connections
are pooled per origin (scheme, host, port), each one judged when it was opened.

`GuardedTransport` is an `httpx.AsyncHTTPTransport` whose pool is built on that backend (httpx has
no public knob for the network backend, so the pool is constructed here; the request/response and
exception mapping are httpx's own). It also screens each request's URL (scheme, syntax, name layer,
address literals) before touching the pool. It never uses a proxy or a unix socket and ignores the
proxy environment. `new_client` is the one-line wiring: an AsyncClient that follows redirects
through this transport, so every hop is screened and every new connection judged.

Known limits: a pooled connection keeps the judgement made when it was opened (a later policy swap
applies to new connections and to every request's screen); Allow is per transport, not per hop.
"""

from __future__ import annotations

import contextlib
import ssl
import typing
from ipaddress import ip_address

import anyio
import httpcore
import httpx

from yagent.kernel.confine.netguard.check import Guard, Resolver
from yagent.kernel.confine.netguard.errors import PeerBlockedError, Phase, URLBlockedError
from yagent.kernel.confine.netguard.names import Target, dial_target
from yagent.kernel.confine.netguard.policy import STRICT, Allow, PolicyStore

SocketOption = (
    tuple[int, int, int] | tuple[int, int, bytes | bytearray] | tuple[int, int, None, int]
)

DEFAULT_LIMITS = httpx.Limits(max_connections=100, max_keepalive_connections=20)


class GuardedBackend(httpcore.AsyncNetworkBackend):
    """Resolves once, judges, dials the judged IP, then verifies the real peer."""

    def __init__(
        self,
        guard: Guard,
        allow: Allow = STRICT,
        inner: httpcore.AsyncNetworkBackend | None = None,
    ) -> None:
        self._guard = guard
        self._allow = allow
        self._inner = inner or httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109 - httpcore's backend signature
        local_address: str | None = None,
        socket_options: typing.Iterable[SocketOption] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        phase = Phase.CONNECT
        target = dial_target(host, port, phase=phase)
        self._guard.judge_name(
            target, self._allow, self._guard.policy.snapshot().policy, phase=phase
        )
        try:
            with anyio.fail_after(timeout) if timeout is not None else contextlib.nullcontext():
                addresses = await self._guard.addresses(target, self._allow, phase=phase)
        except TimeoutError as exc:
            raise httpcore.ConnectTimeout(f"resolving {host!r} timed out") from exc
        options = list(socket_options) if socket_options is not None else None
        failure: Exception = httpcore.ConnectError(f"no address of {host!r} accepted a connection")
        for address in addresses:
            try:
                stream = await self._inner.connect_tcp(
                    str(address), port, timeout, local_address, options
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                failure = exc
                continue
            return await self._verified(stream, str(address), target)
        raise failure

    async def _verified(
        self, stream: httpcore.AsyncNetworkStream, judged: str, target: Target
    ) -> httpcore.AsyncNetworkStream:
        """`stream` if its real peer is exactly the judged address and passes; else closed."""
        peer = _peer_address(stream)
        try:
            if peer is None:
                raise PeerBlockedError(
                    "cannot read the connected peer address",
                    target=target.host,
                    phase=Phase.CONNECT,
                )
            real = ip_address(peer)
            if real != ip_address(judged):
                raise PeerBlockedError(
                    f"connected to {real}, not the judged {judged}",
                    target=target.host,
                    address=str(real),
                    phase=Phase.CONNECT,
                )
            self._guard.judge_address(real, target, self._allow, phase=Phase.CONNECT)
        except BaseException:
            await stream.aclose()
            raise
        return stream

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,  # noqa: ASYNC109 - httpcore's backend signature
        socket_options: typing.Iterable[SocketOption] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise URLBlockedError(
            "unix sockets are not network targets", target=path, phase=Phase.CONNECT
        )

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


def _peer_address(stream: httpcore.AsyncNetworkStream) -> str | None:
    addr = stream.get_extra_info("server_addr")
    if addr is None:
        sock = stream.get_extra_info("socket")
        if sock is None:
            return None
        addr = sock.getpeername()
    host = addr[0] if isinstance(addr, tuple) else addr
    return str(host).split("%", 1)[0] if host else None


class GuardedTransport(httpx.AsyncHTTPTransport):
    """httpx transport that screens every request and judges every connection it opens."""

    def __init__(
        self,
        allow: Allow = STRICT,
        *,
        resolver: Resolver | None = None,
        policy: PolicyStore | None = None,
        verify: ssl.SSLContext | str | bool = True,
        http1: bool = True,
        http2: bool = False,
        limits: httpx.Limits = DEFAULT_LIMITS,
        retries: int = 0,
        network_backend: httpcore.AsyncNetworkBackend | None = None,
    ) -> None:
        # super().__init__ is deliberately not called: it would build an unguarded pool.
        self.guard = Guard(resolver, policy)
        self.allow = allow
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=httpx.create_ssl_context(verify=verify, trust_env=False),
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            http1=http1,
            http2=http2,
            retries=retries,
            network_backend=GuardedBackend(self.guard, allow, network_backend),
        )

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.guard.screen(str(request.url), self.allow)
        return await super().handle_async_request(request)


def new_client(
    allow: Allow = STRICT,
    *,
    resolver: Resolver | None = None,
    policy: PolicyStore | None = None,
    max_redirects: int = 10,
    timeout: float = 30.0,
    network_backend: httpcore.AsyncNetworkBackend | None = None,
) -> httpx.AsyncClient:
    """An AsyncClient whose every request, redirect hop and connection passes netguard."""
    transport = GuardedTransport(
        allow, resolver=resolver, policy=policy, network_backend=network_backend
    )
    return httpx.AsyncClient(
        transport=transport,
        follow_redirects=True,
        max_redirects=max_redirects,
        timeout=timeout,
        trust_env=False,
    )
