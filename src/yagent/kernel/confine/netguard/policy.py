"""netguard opening and extension: `Allow` (per caller) and `Policy` (per process, swappable).

Guarantees:
- `Allow` is the one named opening, the same type for the check and the dial. Its zero value is
  strict. `loopback` opens loopback addresses and localhost names, `private` opens RFC 1918 /
  CGNAT / ULA / site-local addresses and local-network names, `hosts` opens both classes for the
  named hosts only (`name`, `name:port`, `1.2.3.4:80`, `[::1]:8080`). Nothing ever opens metadata,
  link-local, multicast, unspecified, broadcast, documentation, reserved or tunnel addresses.
- `Policy` holds the extension lists: `blocked` names (refused before anything else, Allow cannot
  reopen them) and `allowed` names (exempt from the built-in name rules except metadata; their
  addresses are still judged). Patterns are exact names or `*.suffix`.
- `PolicyStore` swaps the whole Policy atomically. The generation lives inside the stored
  snapshot (one truth; `generation` is its projection), is unique and strictly increasing, and
  every judgement reads one snapshot, so it never sees half of one policy and half of another.
  `swap_func` is a compare-and-swap loop over the current policy, so concurrent editors do not
  lose each other's updates.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from yagent.kernel.confine.netguard.addresses import OPENABLE, AddrClass
from yagent.kernel.confine.netguard.errors import BlockedError, PolicyError, StaleGenerationError
from yagent.kernel.confine.netguard.names import canonical_host

_NOTHING: frozenset[AddrClass] = frozenset()


def _host_entry(entry: str) -> tuple[str, int | None]:
    text = entry.strip()
    port: int | None = None
    if text.startswith("["):
        host_part, _, tail = text.partition("]")
        host_part += "]"
        if tail:
            if not tail.startswith(":"):
                raise PolicyError(f"bad Allow host entry {entry!r}")
            port = _port(tail[1:], entry)
    elif text.count(":") == 1:
        host_part, port_text = text.split(":")
        port = _port(port_text, entry)
    else:
        host_part = text
    bracketed = host_part.startswith("[") or ":" in host_part
    try:
        host, _ = canonical_host(host_part, bracketed=bracketed)
    except BlockedError as exc:
        raise PolicyError(f"bad Allow host entry {entry!r}: {exc.reason}") from exc
    return host, port


def _port(text: str, entry: str) -> int:
    if not text.isascii() or not text.isdigit() or not 0 < int(text) < 65536:
        raise PolicyError(f"bad port in Allow host entry {entry!r}")
    return int(text)


@dataclass(frozen=True, slots=True)
class Allow:
    """A named opening; `Allow()` is strict."""

    loopback: bool = False
    private: bool = False
    hosts: frozenset[str] = frozenset()
    _origins: frozenset[tuple[str, int | None]] = field(
        init=False, repr=False, compare=False, default=frozenset()
    )

    def __post_init__(self) -> None:
        if isinstance(self.hosts, str):
            raise PolicyError("Allow.hosts is a set of names, not one string")
        object.__setattr__(self, "hosts", frozenset(self.hosts))
        object.__setattr__(self, "_origins", frozenset(_host_entry(h) for h in self.hosts))

    def opens(self, host: str, port: int) -> frozenset[AddrClass]:
        """The address / name classes opened for canonical `host` on `port`."""
        if (host, port) in self._origins or (host, None) in self._origins:
            return OPENABLE
        if not (self.loopback or self.private):
            return _NOTHING
        opened = {AddrClass.LOOPBACK} if self.loopback else set()
        if self.private:
            opened.add(AddrClass.PRIVATE)
        return frozenset(opened)


STRICT = Allow()


def _pattern(raw: str) -> str:
    text = raw.strip().lower().removesuffix(".")
    body = text[2:] if text.startswith("*.") else text
    try:
        canonical, ip = canonical_host(body, bracketed=False)
    except BlockedError as exc:
        raise PolicyError(f"bad name pattern {raw!r}: {exc.reason}") from exc
    if ip is not None and text.startswith("*."):
        raise PolicyError(f"wildcard over an address {raw!r}")
    return ("*." + canonical) if text.startswith("*.") else canonical


def _matches(patterns: tuple[str, ...], host: str) -> bool:
    for p in patterns:
        if p.startswith("*."):
            if host.endswith(p[1:]):
                return True
        elif host == p:
            return True
    return False


@dataclass(frozen=True, slots=True)
class Policy:
    """Extension lists. `*.x` matches names under x (not x itself)."""

    blocked: tuple[str, ...] = ()
    allowed: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for name in ("blocked", "allowed"):
            value = getattr(self, name)
            if isinstance(value, str):
                raise PolicyError(f"Policy.{name} is a list of patterns, not one string")
            object.__setattr__(self, name, tuple(_pattern(p) for p in value))

    def blocks(self, host: str) -> bool:
        return _matches(self.blocked, host)

    def allows(self, host: str) -> bool:
        return _matches(self.allowed, host)

    def with_blocked(self, names: Iterable[str]) -> Policy:
        return Policy(blocked=(*self.blocked, *names), allowed=self.allowed)

    def with_allowed(self, names: Iterable[str]) -> Policy:
        return Policy(blocked=self.blocked, allowed=(*self.allowed, *names))


@dataclass(frozen=True, slots=True)
class VersionedPolicy:
    policy: Policy
    generation: int


class PolicyStore:
    """One Policy behind one reference; every swap gets a new, unique, larger generation."""

    def __init__(self, policy: Policy | None = None) -> None:
        self._current = VersionedPolicy(policy or Policy(), 0)
        self._lock = threading.Lock()

    def snapshot(self) -> VersionedPolicy:
        """Policy and generation read together (one reference read, never torn)."""
        return self._current

    @property
    def generation(self) -> int:
        return self._current.generation

    def swap(self, policy: Policy) -> VersionedPolicy:
        """Replace the whole policy (not based on the current one)."""
        with self._lock:
            self._current = VersionedPolicy(policy, self._current.generation + 1)
            return self._current

    def compare_and_swap(self, expected_generation: int, policy: Policy) -> VersionedPolicy:
        """Replace only if the generation is still `expected_generation`."""
        with self._lock:
            if self._current.generation != expected_generation:
                raise StaleGenerationError(expected_generation, self._current.generation)
            self._current = VersionedPolicy(policy, expected_generation + 1)
            return self._current

    def swap_func(self, mutate: Callable[[Policy], Policy]) -> VersionedPolicy:
        """Read-modify-write: `mutate(current)` is retried until it lands on an unchanged base."""
        while True:
            base = self._current
            proposed = mutate(base.policy)
            with self._lock:
                if self._current is base:
                    self._current = VersionedPolicy(proposed, base.generation + 1)
                    return self._current


DEFAULT_POLICY = PolicyStore()
