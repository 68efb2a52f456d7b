"""clock: the one clock vocabulary every kernel package with expiry or timing shares.

Guarantees:
- `Clock` is the protocol: `now() -> float` seconds. Packages take one by injection and never
  read time any other way, so tests move time instead of sleeping.
- `SystemClock` reads `time.time()`: wall seconds every process on one machine agrees on (what
  leases, tickets and stored timestamps need across processes and restarts).
- `MonotonicClock` reads `time.monotonic()`: never jumps back, meaningless across processes
  (what in-process intervals and rate limits need).
- `FakeClock` moves only when told to, and never backwards (`advance` with a negative step is a
  `ValueError`: a test that rewinds time would prove nothing about expiry).
Leaves to each package: which of the two real clocks it defaults to.
"""

from __future__ import annotations

import time
from typing import Protocol, runtime_checkable


@runtime_checkable
class Clock(Protocol):
    def now(self) -> float: ...


class SystemClock:
    """`time.time()`: the clock every process on one machine agrees on."""

    __slots__ = ()

    def now(self) -> float:
        return time.time()


class MonotonicClock:
    """`time.monotonic()`: for intervals inside one process."""

    __slots__ = ()

    def now(self) -> float:
        return time.monotonic()


class FakeClock:
    """A clock that moves only when told to."""

    __slots__ = ("_now",)

    def __init__(self, start: float = 1_000_000.0) -> None:
        self._now = float(start)

    def now(self) -> float:
        return self._now

    def advance(self, seconds: float) -> None:
        if seconds < 0:
            raise ValueError("a FakeClock never runs backwards")
        self._now += seconds
