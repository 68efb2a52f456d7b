"""The registry picks the weakest provider that satisfies the requirement and never downgrades."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from yagent.kernel.confine.sandbox import (
    EgressMode,
    Level,
    NoProviderError,
    Program,
    Registry,
    RegistryError,
    Result,
    UnknownProviderError,
)


class Fake:
    def __init__(self, name: str, level: object, egress: EgressMode | None = None) -> None:
        self._name, self._level, self._egress = name, level, egress

    @property
    def name(self) -> str:
        return self._name

    @property
    def level(self) -> Level:
        return self._level  # type: ignore[return-value]

    async def run(self, program: Program) -> Result:
        return Result(0, provider=self._name)


class Enforcing(Fake):
    def egress(self) -> EgressMode:
        assert self._egress is not None
        return self._egress


def test_pick_returns_the_weakest_provider_that_satisfies() -> None:
    host = Fake("host", Level.IN_PROCESS)
    ns = Fake("ns", Level.NAMESPACES)
    vm = Fake("vm", Level.HARDWARE)
    registry = Registry([vm, host, ns])
    assert registry.pick(Level.IN_PROCESS) is host
    assert registry.pick(Level.NAMESPACES) is ns
    assert registry.pick(Level.HARDWARE) is vm


def test_pick_refuses_rather_than_downgrade() -> None:
    registry = Registry([Fake("host", Level.IN_PROCESS), Fake("ns", Level.NAMESPACES)])
    with pytest.raises(NoProviderError) as caught:
        registry.pick(Level.HARDWARE)
    assert caught.value.level is Level.HARDWARE
    assert [name for name, _, _ in caught.value.available] == ["host", "ns"]
    assert "refusing" in str(caught.value)


def test_an_empty_registry_refuses_even_the_weakest_level() -> None:
    with pytest.raises(NoProviderError, match="registered: none"):
        Registry().pick(Level.IN_PROCESS)


def test_pick_respects_egress_and_takes_the_weakest_enforcer() -> None:
    plain = Fake("plain", Level.NAMESPACES)
    proxy = Enforcing("proxy", Level.NAMESPACES, EgressMode.PROXY)
    sealed = Enforcing("sealed", Level.NAMESPACES, EgressMode.DENIED)
    registry = Registry([sealed, proxy, plain])
    assert registry.pick(Level.NAMESPACES) is plain
    assert registry.pick(Level.NAMESPACES, EgressMode.PROXY) is proxy
    assert registry.pick(Level.NAMESPACES, EgressMode.DENIED) is sealed
    assert registry.pick(Level.IN_PROCESS, EgressMode.DENIED) is sealed


def test_a_provider_that_declares_no_egress_never_satisfies_an_egress_requirement() -> None:
    registry = Registry([Fake("vm", Level.HARDWARE)])
    with pytest.raises(NoProviderError) as caught:
        registry.pick(Level.IN_PROCESS, EgressMode.PROXY)
    assert caught.value.egress is EgressMode.PROXY


def test_a_weak_level_is_not_compensated_by_strong_egress() -> None:
    registry = Registry([Enforcing("sealed-host", Level.IN_PROCESS, EgressMode.DENIED)])
    with pytest.raises(NoProviderError):
        registry.pick(Level.NAMESPACES, EgressMode.DENIED)


@given(st.permutations(["b", "a", "c", "d"]))
def test_ties_are_broken_by_name_never_by_order(names: list[str]) -> None:
    registry = Registry([Fake(n, Level.NAMESPACES) for n in names])
    assert registry.pick(Level.NAMESPACES).name == "a"
    assert [p.name for p in registry.providers] == ["a", "b", "c", "d"]


def test_duplicate_names_are_refused() -> None:
    with pytest.raises(RegistryError, match="two providers"):
        Registry([Fake("x", Level.IN_PROCESS), Fake("x", Level.HARDWARE)])


def test_nameless_or_non_providers_or_unknown_levels_are_refused() -> None:
    with pytest.raises(RegistryError, match="non-empty name"):
        Registry([Fake("", Level.IN_PROCESS)])
    with pytest.raises(RegistryError, match="not a sandbox provider"):
        Registry([object()])  # type: ignore[list-item]
    with pytest.raises(RegistryError, match="unknown level"):
        Registry([Fake("odd", 7)])


def test_with_provider_returns_a_new_registry() -> None:
    base = Registry([Fake("host", Level.IN_PROCESS)])
    grown = base.with_provider(Fake("ns", Level.NAMESPACES))
    assert grown.pick(Level.NAMESPACES).name == "ns"
    with pytest.raises(NoProviderError):
        base.pick(Level.NAMESPACES)


def test_get_by_name_and_describe() -> None:
    registry = Registry([Enforcing("s", Level.NAMESPACES, EgressMode.DENIED)])
    assert registry.get("s").name == "s"
    assert registry.describe() == (("s", Level.NAMESPACES, EgressMode.DENIED),)
    with pytest.raises(UnknownProviderError, match="no sandbox provider named 'x'"):
        registry.get("x")
