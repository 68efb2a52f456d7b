"""The egress allow-list: which hosts and ports a sandboxed command may reach through the proxy.

Grammar of one entry (`[sandbox] allow_hosts`):
- `pypi.org` — exactly that host, on the web ports 80 and 443;
- `.example.org` — every subdomain of example.org (`a.example.org`, `a.b.example.org`), NOT
  example.org itself (list both when both are meant), on ports 80 and 443;
- `host:8443`, `.example.org:8443`, `[2001:db8::1]:443` — that port only (add an entry per port;
  `host` and `host:8443` together open 80, 443 and 8443);
- an IPv4 or bracketed IPv6 literal is an exact host (no leading dot).
Hosts are read the way netguard reads them (IDNA, case, one trailing dot); a non-canonical numeric
spelling (`0x7f.1`), a wildcard (`*`, `*.x`), a scheme, a path, userinfo or a bad port is an
`AllowListError` naming the entry. Being on the list is necessary, never sufficient: the proxy
still puts every target through netguard (a listed name that resolves to a private address stays
refused).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from ipaddress import IPv6Address

from yagent.kernel.confine import netguard
from yagent.kernel.confine.netguard.names import canonical_host

WEB_PORTS = frozenset({80, 443})
"""The ports an entry without `:port` opens."""

_ENTRY = re.compile(r"(?P<host>\[[^\[\]]*\]|[^\[\]:]+)(?::(?P<port>[0-9]{1,5}))?")


class AllowListError(ValueError):
    """An allow-list entry that cannot be read (the message names it)."""


@dataclass(frozen=True, slots=True)
class HostRule:
    """One parsed entry: `host` canonical, `subdomains` for a leading-dot entry."""

    host: str
    subdomains: bool
    ports: frozenset[int]
    entry: str

    def matches(self, host: str, port: int) -> bool:
        if port not in self.ports:
            return False
        if self.subdomains:
            return host.endswith("." + self.host)
        return host == self.host


@dataclass(frozen=True, slots=True)
class AllowList:
    """The parsed allow-list; empty allows nothing."""

    rules: tuple[HostRule, ...] = ()

    @classmethod
    def parse(cls, entries: Iterable[str]) -> AllowList:
        if isinstance(entries, str):
            raise AllowListError("allow_hosts is a list of host entries, not one string")
        return cls(tuple(parse_entry(entry) for entry in entries))

    @property
    def entries(self) -> tuple[str, ...]:
        return tuple(rule.entry for rule in self.rules)

    def __bool__(self) -> bool:
        return bool(self.rules)

    def match(self, host: str, port: int) -> HostRule | None:
        """The first rule letting canonical `host` through on `port`, or None."""
        return next((rule for rule in self.rules if rule.matches(host, port)), None)


def parse_entry(entry: object) -> HostRule:
    """One entry, read strictly (see the module doc)."""
    if not isinstance(entry, str) or not entry.strip():
        raise AllowListError(f"allow_hosts entry {entry!r} must be a non-empty host")
    text = entry.strip()
    subdomains = text.startswith(".")
    body = text[1:] if subdomains else text
    if "*" in body or "/" in body or "@" in body:
        hint = " (write '.example.org' for subdomains)" if "*" in body else ""
        raise AllowListError(f"allow_hosts entry {entry!r} is not a host[:port]{hint}")
    found = _ENTRY.fullmatch(body)
    if found is None:
        raise AllowListError(f"allow_hosts entry {entry!r} is not a host[:port]")
    raw_host, raw_port = found.group("host"), found.group("port")
    ports = WEB_PORTS
    if raw_port is not None:
        if not 0 < int(raw_port) < 65536:
            raise AllowListError(f"allow_hosts entry {entry!r} has a bad port")
        ports = frozenset({int(raw_port)})
    bracketed = raw_host.startswith("[")
    if bracketed and not _is_v6(raw_host[1:-1]):
        raise AllowListError(f"allow_hosts entry {entry!r} has a malformed IPv6 literal")
    try:
        host, ip = canonical_host(raw_host, bracketed=bracketed)
    except netguard.BlockedError as exc:
        raise AllowListError(f"allow_hosts entry {entry!r}: {exc.reason}") from exc
    if subdomains and ip is not None:
        raise AllowListError(f"allow_hosts entry {entry!r}: an address has no subdomains")
    return HostRule(host, subdomains, ports, text)


def _is_v6(text: str) -> bool:
    try:
        IPv6Address(text)
    except ValueError:
        return False
    return True
