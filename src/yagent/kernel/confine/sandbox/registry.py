"""The registry: the only place a provider is chosen, and it never downgrades.

`pick(level, egress)` returns the *weakest* registered provider whose declared level is at least
`level` and whose declared egress enforcement is at least `egress` (weakest first by level, then
by egress, then by name — never by registration order). When none qualifies it raises
`NoProviderError`: running on something weaker would leave no signal between the strength the
host asked for and the strength it got. Levels are self-declared; a host that does not trust a
backend's declaration must not register it.
"""

from __future__ import annotations

from collections.abc import Iterable

from yagent.kernel.confine.sandbox.errors import (
    NoProviderError,
    RegistryError,
    UnknownProviderError,
)
from yagent.kernel.confine.sandbox.levels import EgressMode, Level, egress_of
from yagent.kernel.confine.sandbox.provider import Provider


class Registry:
    """An immutable set of providers, each under a unique name."""

    __slots__ = ("_providers",)

    def __init__(self, providers: Iterable[Provider] = ()) -> None:
        listed = tuple(providers)
        seen: set[str] = set()
        for item in listed:
            if not isinstance(item, Provider):
                raise RegistryError(f"{item!r} is not a sandbox provider (name, level, run)")
            if not item.name:
                raise RegistryError("a provider needs a non-empty name")
            try:
                Level(item.level)
            except (ValueError, TypeError) as exc:
                raise RegistryError(f"provider {item.name!r} declares an unknown level") from exc
            if item.name in seen:
                raise RegistryError(f"two providers are named {item.name!r}")
            seen.add(item.name)
        self._providers = tuple(sorted(listed, key=_strength))

    @property
    def providers(self) -> tuple[Provider, ...]:
        """Every provider, weakest first."""
        return self._providers

    def with_provider(self, provider: Provider) -> Registry:
        """A new registry with `provider` added (this one is not modified)."""
        return Registry((*self._providers, provider))

    def get(self, name: str) -> Provider:
        for item in self._providers:
            if item.name == name:
                return item
        raise UnknownProviderError(name, tuple(p.name for p in self._providers))

    def pick(self, level: Level, egress: EgressMode = EgressMode.UNRESTRICTED) -> Provider:
        """The weakest provider offering at least `level` and `egress`; refuses when none does."""
        wanted_level, wanted_egress = Level(level), EgressMode(egress)
        for item in self._providers:
            if Level(item.level) >= wanted_level and egress_of(item) >= wanted_egress:
                return item
        raise NoProviderError(wanted_level, wanted_egress, self.describe())

    def describe(self) -> tuple[tuple[str, Level, EgressMode], ...]:
        """(name, level, egress) of every provider, weakest first (for messages and reports)."""
        return tuple((p.name, Level(p.level), egress_of(p)) for p in self._providers)


def _strength(item: Provider) -> tuple[int, int, str]:
    return (int(item.level), int(egress_of(item)), item.name)
