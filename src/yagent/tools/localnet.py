"""The opening for local development: which loopback and private hosts the browser and `web_fetch`
may reach (`[network] allow_local`, `yagent run --allow-local`).

Grammar of one entry — a port is always required, so the opening is one service, not a range:
- `5173` — port 5173 on this machine's loopback: `localhost`, `127.0.0.1` and `[::1]`;
- `localhost:3000`, `127.0.0.1:5173`, `[::1]:8080` — that loopback host on that port;
- `devbox.lan:8080`, `10.0.0.5:8000`, `[fd00::5]:80` — that named private host or address on
  that port (a name's addresses are still judged at every fetch: only loopback and private ones
  are opened for it, and only on that port).
Refused with a `LocalNetError` naming the entry: no port or a bad one, a scheme, a path, a
wildcard, a cloud metadata name, and an address literal that is not loopback or private (metadata,
link-local, multicast, … are never opened; a public address needs no opening).

Guarantees:
- `allow_of(entries)` is the netguard `Allow` for the entries: host-and-port exact (`Allow.hosts`),
  its `loopback` / `private` flags left off, so nothing beyond the listed services opens. Netguard
  itself keeps metadata, link-local, multicast, reserved and tunnel addresses refused whatever a
  host entry says, and a redirect to an unlisted port or host is judged (and refused) on its own.
- `refuse_local(hosts)` refuses (`AllowListError`) a `[sandbox] allow_hosts` list naming a
  loopback or private host — it cannot work: a sandboxed command has its own loopback and the
  egress proxy never opens local addresses — pointing to `allow_local`
  (`sandbox_host_problem` is the one sentence, None for a public host).
- `refusal(exc)` is the one model-facing sentence for a netguard refusal: netguard's reason, and
  for a loopback or private target how the person opens it (or that nothing opens it); for a
  scheme other than http/https, that only those two are fetched (and, for `file:`, read_file).
Leaves to the host: where the entries come from (config after project trust, the CLI flag) and
handing the `Allow` to the tools (`hostservices.configure_web`, `configure_browser`).
"""

from __future__ import annotations

from collections.abc import Iterable
from ipaddress import ip_address

from yagent.kernel.confine import netguard
from yagent.kernel.confine.netguard import AddrClass
from yagent.kernel.confine.netguard.names import canonical_host
from yagent.tools.egress.allowlist import AllowList, AllowListError

LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "[::1]")
"""The hosts a bare `PORT` entry opens."""

HOW_TO_OPEN = (
    "to let yagent reach the app you are developing, run with --allow-local PORT (this run "
    'only) or list it in [network] allow_local = ["host:port"] (a project\'s file needs '
    "`yagent trust`); an interactive session without -y asks the person once"
)


class LocalNetError(ValueError):
    """An `allow_local` entry that cannot be read or opens what must stay closed."""


def _port(text: str, entry: str) -> int:
    if not text.isascii() or not text.isdigit() or not 0 < int(text) < 65536:
        raise LocalNetError(f"allow_local entry {entry!r}: the port must be 1-65535")
    return int(text)


def _split(text: str, entry: str) -> tuple[str, str]:
    if text.startswith("["):
        host, close, tail = text.partition("]")
        if not close or not tail.startswith(":"):
            raise LocalNetError(f"allow_local entry {entry!r} is not [address]:port")
        return host + "]", tail[1:]
    host, colon, port = text.rpartition(":")
    if not colon or not host or ":" in host:
        raise LocalNetError(
            f"allow_local entry {entry!r} needs a port: write PORT or host:port "
            "(e.g. 5173, localhost:3000, devbox.lan:8080)"
        )
    return host, port


def parse_entry(entry: object) -> tuple[str, ...]:
    """The `host:port` openings of one entry (canonical hosts), or a LocalNetError."""
    if not isinstance(entry, str | int) or isinstance(entry, bool):
        raise LocalNetError(f"allow_local entry {entry!r} must be PORT or host:port")
    text = str(entry).strip()
    if text.isascii() and text.isdigit():
        port = _port(text, text)
        return tuple(f"{host}:{port}" for host in LOOPBACK_HOSTS)
    if not text or any(c in text for c in "/@*?#") or "://" in text:
        raise LocalNetError(f"allow_local entry {entry!r} must be PORT or host:port")
    raw_host, raw_port = _split(text, text)
    port = _port(raw_port, text)
    bracketed = raw_host.startswith("[")
    try:
        host, ip = canonical_host(raw_host, bracketed=bracketed)
    except netguard.BlockedError as exc:
        raise LocalNetError(f"allow_local entry {entry!r}: {exc.reason}") from None
    if ip is None:
        if netguard.classify_name(host) is AddrClass.METADATA:
            raise LocalNetError(f"allow_local entry {entry!r}: a cloud metadata name never opens")
        return (f"{host}:{port}",)
    found = netguard.classify(ip)
    if found is None:
        raise LocalNetError(
            f"allow_local entry {entry!r}: {ip} is a public address, which needs no opening"
        )
    if found.cls not in netguard.OPENABLE:
        raise LocalNetError(f"allow_local entry {entry!r}: {found.reason} never opens")
    shown = f"[{ip}]" if ip.version == 6 else str(ip)
    return (f"{shown}:{port}",)


def allow_of(entries: Iterable[object]) -> netguard.Allow:
    """The netguard opening for `entries` (strict when there are none)."""
    if isinstance(entries, str):
        raise LocalNetError("allow_local is a list of entries, not one string")
    hosts = frozenset(h for entry in entries for h in parse_entry(entry))
    return netguard.Allow(hosts=hosts) if hosts else netguard.STRICT


def _blocked_class(exc: netguard.BlockedError) -> AddrClass | None:
    if exc.address:
        try:
            found = netguard.classify(ip_address(exc.address))
        except ValueError:
            return None
        return found.cls if found is not None else None
    if isinstance(exc, netguard.NameBlockedError) and exc.target:
        if exc.reason == "blocked by policy extension list":
            return None
        return netguard.classify_name(exc.target)
    return None


def refusal(exc: netguard.BlockedError) -> str:
    """Netguard's refusal as the model reads it: the reason, and whether anything opens it."""
    cls = _blocked_class(exc)
    if isinstance(exc, netguard.SchemeBlockedError):
        local = " (read a local file with read_file)" if _scheme(exc.target) == "file" else ""
        return (
            f"netguard refused {exc.target!r}: {exc}; only http:// and https:// URLs are "
            f"fetched, and no setting opens another scheme{local}"
        )
    if cls in netguard.OPENABLE:
        return f"netguard refused {exc.target!r}: {exc}; {HOW_TO_OPEN}"
    if cls is not None:
        return f"netguard refused {exc.target!r}: {exc}; no setting opens a {cls} address"
    return f"netguard refused {exc.target!r}: {exc}"


def _scheme(url: str) -> str:
    head, colon, _ = url.partition(":")
    return head.lower() if colon else ""


def sandbox_host_problem(host: str, entry: str) -> str | None:
    """Why a `[sandbox] allow_hosts` entry for canonical `host` would change nothing, or None."""
    try:
        found = netguard.classify(ip_address(host.strip("[]")))
        local = None if found is None else str(found.cls)
    except ValueError:
        name = netguard.classify_name(host)
        local = None if name is None else str(name)
    if local is None:
        return None
    return (
        f"allow_hosts entry {entry!r} is a {local} host: sandboxed commands have their own "
        "loopback and the egress proxy never opens local addresses, so it would change "
        "nothing; for the browser and web_fetch list it in [network] allow_local (or run with "
        "--allow-local PORT)"
    )


def refuse_local(hosts: AllowList) -> AllowList:
    """`hosts` unchanged, or an AllowListError for its first loopback or private entry."""
    for rule in hosts.rules:
        problem = sandbox_host_problem(rule.host, rule.entry)
        if problem is not None:
            raise AllowListError(problem)
    return hosts
