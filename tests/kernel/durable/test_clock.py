"""The shared clock vocabulary."""

from __future__ import annotations

import time

import pytest

from yagent.kernel.context import spill
from yagent.kernel.durable import clock, commitgate, sideeffect, taskboard


def test_fake_clock_moves_only_forward_and_only_when_told() -> None:
    fake = clock.FakeClock(10)
    assert fake.now() == 10.0
    fake.advance(2.5)
    assert fake.now() == 12.5
    with pytest.raises(ValueError, match="never runs backwards"):
        fake.advance(-1)
    assert fake.now() == 12.5


def test_real_clocks_read_their_sources() -> None:
    before = time.time()
    assert before <= clock.SystemClock().now() <= time.time()
    first = clock.MonotonicClock().now()
    assert first <= time.monotonic()


def test_every_clock_satisfies_the_protocol_and_packages_share_it() -> None:
    for each in (clock.FakeClock(), clock.SystemClock(), clock.MonotonicClock()):
        assert isinstance(each, clock.Clock)
    assert not isinstance(object(), clock.Clock)
    # one vocabulary: the packages re-export the same objects, not look-alikes
    assert sideeffect.SystemClock is taskboard.SystemClock is commitgate.SystemClock
    assert spill.SystemClock is clock.SystemClock
