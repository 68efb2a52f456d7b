"""The egress proxy: the one way out of the sandbox, for allow-listed hosts that netguard passes.

Guarantees:
- An HTTP forward proxy on a UNIX socket in a private 0700 directory (never a TCP port another
  local user could use). It lives under `/run/user/<uid>` (`XDG_RUNTIME_DIR`) or `/tmp`, which
  every sandbox masks: only a program the sandbox binds it into can reach it.
- It serves `CONNECT host:port` (a tunnel, for https) and absolute-URI plain `http://` requests.
  Every target must be on the allow-list (`allowlist`) AND pass netguard: the name layer, ONE
  resolution, every address judged, the judged address itself dialled and the real peer checked
  (`netguard.GuardedBackend` — no second lookup an attacker's DNS could answer differently).
- A refusal is a `403` (`400`/`408`/`431`/`503` for a bad, slow, oversized or excess request)
  with a one-line reason; every decision is counted and kept (the last `MAX_LOG`, the count of
  older ones dropped says they were) and handed to the observer.
- Plain http: the request goes out in origin form with `Host` rewritten to the URL's authority
  (no virtual-host hopping to another site on the same server), proxy and hop-by-hop headers
  dropped, `Connection: close`, and only `Content-Length` bytes of body (no chunked uploads):
  nothing can be pipelined behind the judged request.
- Bounded: at most `MAX_TUNNELS` connections (more get 503 at once), the request head within
  `HEADER_TIMEOUT` and `wire.MAX_HEADER` bytes, a tunnel idle for
  `wire.IDLE_TIMEOUT` closed (the wire details live in `wire`).
- `route` gives a sandboxed command its way here: the proxy variables `egress.env` writes for the
  bridge's address (`BRIDGE_PORT`, inside the sandbox), verified, and the bridge around it (a
  `Bridged` launcher).
- Per command: `watch(launcher)` around one run of a `Bridged` launcher issues a tag
  (`attribution.Ledger`), runs the bridge with it and, when the block ends, puts the command's
  `attribution.Report` on the watch. A connection announcing a tag the proxy does not follow is a
  400; an untagged one (a program reaching the socket itself) is served and filed under no
  command. Refused before its head is read (503 over the bound) means filed under no command.
Leaves to others: what goes through a tunnel (TLS is not inspected: an allowed host receives
whatever the program sends it), and routing programs here (`sandboxbridge`, proxy variables).
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

import anyio
import anyio.abc
import httpcore

from yagent.kernel.confine import egress, netguard
from yagent.tools.egress.allowlist import AllowList
from yagent.tools.egress.attribution import (
    NOT_LISTED,
    Counts,
    EgressDecision,
    Ledger,
    Report,
    unattributed,
)
from yagent.tools.egress.wire import Refused, Request, closing, parse, read_head, refusal, tunnel

__all__ = [
    "Bridged",
    "Counts",
    "EgressDecision",
    "EgressProxy",
    "ProxyError",
    "Watch",
    "route",
    "watch",
]

HEADER_TIMEOUT = 30.0
CONNECT_TIMEOUT = 30.0
MAX_TUNNELS = 64
MAX_LOG = 256
SOCKET_NAME = "proxy.sock"
BRIDGE_PORT = 3128
"""The bridge's port inside the sandbox (its own network namespace: no clash with the host)."""
LOOPBACK_BYPASS = ("localhost", "127.0.0.1", "::1")
"""Direct inside the sandbox: its own loopback (the host's is unreachable from there)."""

Launcher = Callable[[Sequence[str]], list[str]]


class ProxyError(Exception):
    """Root of this module's errors."""


class EgressProxy:
    """The proxy, served for the lifetime of `async with` (the App's)."""

    def __init__(
        self,
        hosts: AllowList,
        *,
        directory: str | os.PathLike[str] | None = None,
        guard: netguard.Guard | None = None,
        opening: netguard.Allow = netguard.STRICT,
        observer: Callable[[EgressDecision], None] | None = None,
    ) -> None:
        self.hosts = hosts
        self._given = Path(directory) if directory is not None else None
        self._directory: Path | None = None
        self._backend = netguard.GuardedBackend(guard or netguard.Guard(), opening)
        self._observer = observer
        self._log: collections.deque[EgressDecision] = collections.deque(maxlen=MAX_LOG)
        self.ledger = Ledger()
        self._allowed = self._refused = self._active = 0
        self._group: anyio.abc.TaskGroup | None = None
        self._listener: anyio.abc.SocketListener | None = None
        self._served = False

    # -- lifetime -----------------------------------------------------------------------------
    @property
    def directory(self) -> Path:
        """The private directory holding the socket (created on first use, removed on exit), so
        a sandbox can be told where to bind it before the proxy starts."""
        if self._directory is None:
            self._directory = _private_directory(self._given)
        return self._directory

    @property
    def socket_path(self) -> Path:
        return self.directory / SOCKET_NAME

    @property
    def running(self) -> bool:
        return self._group is not None

    async def __aenter__(self) -> EgressProxy:
        if self._served:
            raise ProxyError("an egress proxy serves once (its directory is gone)")
        self._served = True
        path = self.socket_path
        try:
            if len(os.fsencode(path)) >= 108:
                raise ProxyError(f"socket path {str(path)!r} is too long for a unix socket")
            self._listener = await anyio.create_unix_listener(path, mode=0o600)
        except BaseException:
            await self.__aexit__(None, None, None)
            raise
        group = anyio.create_task_group()
        await group.__aenter__()
        group.start_soon(self._listener.serve, self._handle)
        self._group = group
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        group, self._group = self._group, None
        if group is not None:
            group.cancel_scope.cancel()
            await group.__aexit__(None, None, None)
        listener, self._listener = self._listener, None
        if listener is not None:
            await listener.aclose()
        if self._directory is not None:
            if self._given is None:
                shutil.rmtree(self._directory, ignore_errors=True)
            else:
                with contextlib.suppress(OSError):
                    (self._directory / SOCKET_NAME).unlink()

    # -- what was decided ---------------------------------------------------------------------
    @property
    def decisions(self) -> tuple[EgressDecision, ...]:
        return tuple(self._log)

    @property
    def counts(self) -> Counts:
        dropped = self._allowed + self._refused - len(self._log)
        return Counts(self._allowed, self._refused, dropped)

    def _record(self, decision: EgressDecision) -> None:
        if decision.allowed:
            self._allowed += 1
        else:
            self._refused += 1
        self._log.append(decision)
        self.ledger.record(decision)
        if self._observer is not None:
            self._observer(decision)

    # -- serving ------------------------------------------------------------------------------
    async def _handle(self, client: anyio.abc.SocketStream) -> None:
        async with client:
            if self._active >= MAX_TUNNELS:
                await self._refuse(client, "-", Refused(503, "too many open connections"))
                return
            self._active += 1
            try:
                await self._serve(client)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError, anyio.EndOfStream):
                pass  # the program hung up; nothing more to say to it
            finally:
                self._active -= 1

    async def _serve(self, client: anyio.abc.SocketStream) -> None:
        method, tag = "-", None
        try:
            got = await read_head(client, HEADER_TIMEOUT)
            if got.tag is not None and not self.ledger.knows(got.tag):
                raise Refused(400, "the tag line names no command this proxy follows")
            tag, rest = got.tag, got.rest
            request = parse(got.head)
            method = request.method
            upstream = await self._open(request)
        except Refused as refused:
            await self._refuse(client, method, refused, refused.tag or tag)
            return
        target = request.target
        self._record(EgressDecision(method, target.host, target.port, True, "allow-listed", tag))
        async with closing(upstream):
            if method == "CONNECT":
                await client.send(b"HTTP/1.1 200 Connection established\r\n\r\n")
                await tunnel(client, upstream, rest, None)
            else:
                await upstream.write(request.head)
                await tunnel(client, upstream, rest, request.body)

    async def _open(self, request: Request) -> httpcore.AsyncNetworkStream:
        target = request.target
        where = (target.host, target.port)
        if self.hosts.match(*where) is None:
            why = f"{_show(*where)} is not on the egress allow-list"
            raise Refused(403, why, *where, recorded=NOT_LISTED)
        try:
            return await self._backend.connect_tcp(
                target.host, target.port, timeout=CONNECT_TIMEOUT
            )
        except netguard.BlockedError as exc:
            at = f" ({exc.address})" if exc.address else ""
            raise Refused(403, f"refused by netguard: {exc.reason}{at}", *where) from exc
        except (httpcore.ConnectError, httpcore.ConnectTimeout, OSError) as exc:
            raise Refused(502, f"could not connect to {_show(*where)}: {exc}", *where) from exc

    async def _refuse(
        self, client: anyio.abc.SocketStream, method: str, why: Refused, tag: str | None = None
    ) -> None:
        tag = tag if self.ledger.knows(tag) else None
        self._record(EgressDecision(method, why.host, why.port, False, why.recorded, tag))
        with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
            await client.send(refusal(why))


def route(
    proxy: EgressProxy, spec: egress.Spec, environ: Mapping[str, str], launcher: Launcher
) -> tuple[dict[str, str], Launcher]:
    """The environment and launcher that send a sandboxed command through `proxy`: the proxy
    variables `egress.env` writes for the bridge's address (checked with `egress.verify`; any
    inherited spelling of them dropped), and `launcher` running the bridge around the command."""
    if not proxy.running:
        raise ProxyError("the egress proxy is not running")
    url = f"http://127.0.0.1:{BRIDGE_PORT}"
    values = egress.env(spec, url)
    names = {name.upper() for name in values}
    routed = {k: v for k, v in environ.items() if k.upper() not in names} | values
    egress.verify(spec, routed, url)
    bridge: tuple[str, ...] = (sys.executable, "-I", "-m", "yagent.tools.egress.sandboxbridge")
    bridge += ("--socket", str(proxy.socket_path), "--port", str(BRIDGE_PORT))
    return routed, Bridged(proxy, bridge, launcher)


@dataclass(frozen=True, slots=True)
class Bridged:
    """A launcher running the bridge (`prefix`, announcing `tag` when set) around a command."""

    proxy: EgressProxy
    prefix: tuple[str, ...]
    inner: Launcher
    tag: str | None = None

    def __call__(self, argv: Sequence[str]) -> list[str]:
        tagged = ("--tag", self.tag) if self.tag is not None else ()
        return self.inner([*self.prefix, *tagged, "--", *argv])


class Watch:
    """One command's run: the launcher to use, and its report once the `watch` block ended
    (None while running, and for a command not behind the proxy)."""

    def __init__(self, launcher: Launcher | None) -> None:
        self.launcher = launcher
        self.report: Report | None = None


@contextlib.contextmanager
def watch(launcher: Launcher | None) -> Iterator[Watch]:
    """Around one run: a `Bridged` launcher gets a fresh tag, its report is taken at the end."""
    if not isinstance(launcher, Bridged):
        yield Watch(launcher)
        return
    ledger = launcher.proxy.ledger
    tag = ledger.issue()
    full = f"the proxy was already following {ledger.following} running commands"
    watching = Watch(dataclasses.replace(launcher, tag=tag))
    try:
        yield watching
    finally:
        watching.report = unattributed(full) if tag is None else ledger.take(tag)


def bridge_paths() -> tuple[str, ...]:
    """Where the bridge's code lives (the directory holding the `yagent` package), for a
    sandbox that masks it (a checkout under /tmp) to show it read-only."""
    root = str(Path(__file__).resolve().parents[3])  # egress, tools, yagent, its parent
    return (root,) if root.startswith(("/tmp/", "/run/")) else ()


def _show(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _private_directory(given: Path | None) -> Path:
    if given is not None:
        given.mkdir(parents=True, exist_ok=True)
        given.chmod(0o700)
        return given.resolve()
    return Path(tempfile.mkdtemp(prefix="yagent-egress-", dir=runtime_base()))


def runtime_base() -> str:
    """Where the socket directory goes: the user's runtime directory under /run, else /tmp —
    both masked in every sandbox. `TMPDIR` is not honoured: it may point anywhere."""
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    if runtime and os.path.isdir(runtime):
        real = os.path.realpath(runtime)
        info = os.stat(real)
        if real.startswith("/run/") and info.st_uid == os.getuid() and info.st_mode & 0o077 == 0:
            return real
    return "/tmp"
