"""Levels and egress modes compare, start at the weakest, and parse strictly."""

from __future__ import annotations

import pytest

from yagent.kernel.confine.sandbox import EgressEnforcer, EgressMode, Level, egress_of


def test_levels_are_ordered_weakest_first_and_zero_is_weakest() -> None:
    assert Level.IN_PROCESS < Level.NAMESPACES < Level.HARDWARE
    assert Level(0) is Level.IN_PROCESS
    assert min(Level) is Level.IN_PROCESS


def test_egress_modes_are_ordered_loosest_first_and_zero_is_loosest() -> None:
    assert EgressMode.UNRESTRICTED < EgressMode.PROXY < EgressMode.DENIED
    assert EgressMode(0) is EgressMode.UNRESTRICTED


@pytest.mark.parametrize(
    ("raw", "level"),
    [
        ("namespaces", Level.NAMESPACES),
        (" Hardware ", Level.HARDWARE),
        ("in-process", Level.IN_PROCESS),
        (1, Level.NAMESPACES),
        (Level.HARDWARE, Level.HARDWARE),
    ],
)
def test_level_parse(raw: object, level: Level) -> None:
    assert Level.parse(raw) is level


@pytest.mark.parametrize("raw", ["vm", "", 3, -1, True, None, 1.0])
def test_level_parse_refuses_anything_else(raw: object) -> None:
    with pytest.raises(ValueError, match="unknown sandbox level"):
        Level.parse(raw)


@pytest.mark.parametrize(
    ("raw", "mode"),
    [("proxy", EgressMode.PROXY), ("DENIED", EgressMode.DENIED), (0, EgressMode.UNRESTRICTED)],
)
def test_egress_parse(raw: object, mode: EgressMode) -> None:
    assert EgressMode.parse(raw) is mode
    assert EgressMode.parse(mode) is mode


@pytest.mark.parametrize("raw", ["off", 5, False, None])
def test_egress_parse_refuses_anything_else(raw: object) -> None:
    with pytest.raises(ValueError, match="unknown egress mode"):
        EgressMode.parse(raw)


class _Claims:
    def __init__(self, answer: object) -> None:
        self.answer = answer

    def egress(self) -> object:
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


def test_egress_of_reads_the_claim() -> None:
    backend = _Claims(EgressMode.PROXY)
    assert isinstance(backend, EgressEnforcer)
    assert egress_of(backend) is EgressMode.PROXY


@pytest.mark.parametrize("answer", [object(), 9, RuntimeError("probe broke")])
def test_a_claim_that_cannot_be_read_is_the_weakest(answer: object) -> None:
    assert egress_of(_Claims(answer)) is EgressMode.UNRESTRICTED


def test_silence_is_the_weakest_mode() -> None:
    assert egress_of(object()) is EgressMode.UNRESTRICTED
