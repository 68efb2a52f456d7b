"""ptc budgets: what one program may spend, and the one rule for its wall-clock deadline.

Contract:
- `Budget` holds the hard limits (wall seconds, host calls, bytes returned to the program, V8
  heap bytes) and the output caps (characters of the final value and of console output kept).
  Every figure must be positive; a budget that allows nothing is a host mistake, refused.
- `wall_deadline(budget)` is the earlier of now + `budget.wall` and the caller's effective anyio
  deadline (less `DEADLINE_MARGIN`, so the run's own scope fires first and the caller gets a
  classified abort, not a bare cancellation), with the cause it stands for (`wall`/`deadline`).
- `Meter` counts calls and bytes and raises `Stop` the moment a limit is crossed: the call that
  would exceed the call budget is not made, the reply that would exceed the byte budget is not
  delivered.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

import anyio

from yagent.kernel.ptc.errors import Cause, Stop

MIB = 1024 * 1024


@dataclass(frozen=True, slots=True)
class Budget:
    """Hard limits (abort when crossed) and output caps (truncate visibly)."""

    wall: float = 30.0  # seconds
    calls: int = 100  # host calls
    bytes: int = 8 * MIB  # bytes of host replies delivered to the program
    heap: int = 128 * MIB  # V8 hard heap limit
    result: int = 16 * 1024  # characters of the final value returned
    logs: int = 8 * 1024  # characters of console output kept

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if not (isinstance(value, int | float) and value > 0 and math.isfinite(value)):
                raise ValueError(f"ptc.Budget.{f.name} must be a positive number, got {value!r}")


# How long before the caller's own deadline a run stops itself: its scope must fire first, so
# the caller receives a classified `AbortedError` rather than a bare cancellation.
DEADLINE_MARGIN = 0.05


def wall_deadline(budget: Budget) -> tuple[float, Cause]:
    """The run's deadline (anyio time) and whether it is the budget's or the caller's."""
    own = anyio.current_time() + budget.wall
    outer = anyio.current_effective_deadline() - DEADLINE_MARGIN
    if outer < own:
        return outer, Cause.DEADLINE
    return own, Cause.WALL


def deadline_detail(cause: Cause, budget: Budget) -> str:
    if cause is Cause.DEADLINE:
        return "the caller's deadline passed before the program finished"
    return f"the program ran longer than its wall-clock budget of {budget.wall:g}s"


class Meter:
    """Calls and bytes spent so far, against a budget."""

    __slots__ = ("budget", "bytes", "calls")

    def __init__(self, budget: Budget) -> None:
        self.budget = budget
        self.calls = 0
        self.bytes = 0

    def charge_call(self) -> int:
        """Count one more host call (its 1-based number); Stop when over the call budget."""
        if self.calls >= self.budget.calls:
            raise Stop(
                Cause.CALLS,
                f"the program made more than {self.budget.calls} host calls (the call budget)",
            )
        self.calls += 1
        return self.calls

    def charge_bytes(self, size: int) -> None:
        """Count `size` more bytes delivered; Stop (before delivery) when over the byte budget."""
        if self.bytes + size > self.budget.bytes:
            raise Stop(
                Cause.BYTES,
                f"host replies would exceed {self.budget.bytes} bytes returned to the program "
                f"({self.bytes} so far, next reply {size})",
            )
        self.bytes += size
