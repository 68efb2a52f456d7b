"""drain: graceful drain of in-flight turns within a budget, then a forced stop.

Guarantees:
- A turn run through `TurnGroup.run` is detached from its caller's cancellation (a shielded
  scope): Ctrl-C on the caller does not cut the turn mid-step; `drain` decides when it stops.
- `drain(turns, budget)` closes the group to new turns, waits for the turns in flight, and when
  the budget is spent force-stops the rest (their scopes are cancelled; each raises
  `TurnStoppedError` to its caller). Draining is itself shielded, so the cancellation that
  triggered shutdown cannot cut it short. The `DrainReport` says how many turns were forced
  and how many did not even unwind within `FORCE_GRACE` — a degraded drain is never silent.
- `Budget` is its own type (a frozen dataclass, not a float or a `NewType` of one), so it cannot
  be handed to `anyio.fail_after` / `move_on_after` by mistake — the type checker refuses it,
  which closes the one path by which a graceful drain silently became a hard cut. The final
  shutdown timeout, which *is* a plain number, comes from `shutdown_budget(x)`.
- Normalisation: 0 means the default (`DEFAULT_BUDGET`); a positive value is kept; a negative
  value means "no drain: stop at once" and is never normalised to the default (that would turn
  "do less" into "wait a minute more"). NaN and infinities are refused.
Leaves to the host: what a turn is, the configured budget, and what to do with stuck turns.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Protocol, TypeVar, runtime_checkable

import anyio
import anyio.lowlevel

T = TypeVar("T")

DEFAULT_BUDGET = 60.0
"""Seconds a budget of 0 stands for (a seam: tests patch it)."""

FORCE_GRACE = 5.0
"""Seconds force-stopped turns get to unwind before they are reported stuck (a seam)."""


class DrainError(Exception):
    """Root of every drain error."""


class InvalidBudgetError(DrainError, ValueError):
    """A budget that is not a finite number of seconds."""


class DrainingError(DrainError):
    """The group is draining or stopped: it admits no new turn."""


class TurnStoppedError(DrainError):
    """The turn was force-stopped because the drain budget was spent."""


def _seconds(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise InvalidBudgetError(f"drain: a budget must be finite seconds, got {value!r}")
    return float(value)


@dataclass(frozen=True, slots=True)
class Budget:
    """A drain budget: `seconds` > 0 to drain that long, < 0 for no drain. 0 becomes the default."""

    seconds: float

    def __post_init__(self) -> None:
        seconds = _seconds(self.seconds)
        object.__setattr__(self, "seconds", DEFAULT_BUDGET if seconds == 0 else seconds)

    @property
    def drains(self) -> bool:
        """False for a negative budget: stop at once."""
        return self.seconds > 0


def budget(seconds: float) -> Budget:
    """The drain budget for a configured number of seconds (see the module's normalisation)."""
    return Budget(seconds)


def shutdown_budget(seconds: float) -> float:
    """The final shutdown timeout, a plain float for `fail_after`: the same normalisation as
    `budget`, except that "no drain" (negative) is a timeout of 0 — stop at once."""
    normal = Budget(seconds)
    return normal.seconds if normal.drains else 0.0


def _require(value: object) -> Budget:
    if not isinstance(value, Budget):
        raise InvalidBudgetError(
            f"drain: expected a Budget (use drain.budget(x)), got {type(value).__name__}"
        )
    return value


@runtime_checkable
class Turns(Protocol):
    """What `drain` needs of the host's in-flight work."""

    def close(self) -> None:
        """Admit no new turn."""
        ...

    def in_flight(self) -> int: ...

    async def wait_idle(self) -> None:
        """Return once no turn is in flight."""
        ...

    def stop(self) -> None:
        """Force every in-flight turn to stop (cancel it)."""
        ...


@dataclass(frozen=True, slots=True)
class DrainReport:
    """How a drain went: `forced` turns were stopped when the budget ran out (or at once, for no
    drain); `stuck` ones were still running after `FORCE_GRACE`."""

    in_flight: int
    forced: int
    stuck: int
    budget: float

    @property
    def clean(self) -> bool:
        return self.forced == 0 and self.stuck == 0


class TurnGroup:
    """Runs turns detached from their callers' cancellation and tracks them for `drain`."""

    def __init__(self) -> None:
        self._scopes: set[anyio.CancelScope] = set()
        self._idle: anyio.Event | None = None
        self._closed = False

    @property
    def closed(self) -> bool:
        return self._closed

    def close(self) -> None:
        self._closed = True

    def in_flight(self) -> int:
        return len(self._scopes)

    async def run(self, fn: Callable[..., Awaitable[T]], *args: object) -> T:
        """Run one turn; `TurnStoppedError` if `stop` cut it, `DrainingError` once closed.

        A caller cancelled while its turn ran is told so (`Cancelled`) once the turn finished:
        the turn completes on its own terms, the caller does not carry on as if not cancelled.
        """
        if self._closed:
            raise DrainingError("drain: the group is draining; no new turn is admitted")
        scope = anyio.CancelScope(shield=True)
        if not self._scopes:
            self._idle = anyio.Event()
        self._scopes.add(scope)
        try:
            with scope:
                result = await fn(*args)
        finally:
            self._scopes.discard(scope)
            if not self._scopes and self._idle is not None:
                self._idle.set()
        if not scope.cancelled_caught:
            await anyio.lowlevel.checkpoint_if_cancelled()
            return result
        raise TurnStoppedError("drain: the turn was force-stopped when the drain budget ran out")

    async def wait_idle(self) -> None:
        while self._scopes and self._idle is not None:
            await self._idle.wait()

    def stop(self) -> None:
        self._closed = True
        for scope in list(self._scopes):
            scope.cancel()


@contextmanager
def detached(budget: Budget) -> Iterator[anyio.CancelScope]:
    """A scope shielded from the caller's cancellation that ends when `budget` is spent (at
    once for a negative budget); `scope.cancelled_caught` tells whether the budget cut it."""
    chosen = _require(budget)
    deadline = anyio.current_time() + chosen.seconds if chosen.drains else -math.inf
    with anyio.CancelScope(shield=True, deadline=deadline) as scope:
        yield scope


async def drain(turns: Turns, budget: Budget) -> DrainReport:
    """Close `turns`, wait for them within `budget`, then force-stop what is left."""
    chosen = _require(budget)
    turns.close()
    started = turns.in_flight()
    with anyio.CancelScope(shield=True):
        if chosen.drains and started:
            with anyio.move_on_after(chosen.seconds):
                await turns.wait_idle()
        forced = turns.in_flight()
        if forced:
            turns.stop()
            with anyio.move_on_after(FORCE_GRACE):
                await turns.wait_idle()
        stuck = turns.in_flight()
    return DrainReport(started, forced, stuck, chosen.seconds)
