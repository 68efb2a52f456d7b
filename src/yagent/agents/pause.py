"""The pause gate: one place, at the step boundary, where a run may be held.

Contract: `wait()` is called by the loop between steps only (never
inside a tool batch, which would leave half-done side effects). While paused it waits without
cancelling anything and freezes the run's activity monitor; `resume()` continues in place;
`abandon()` ends the wait with `PauseAbandonedError`, which the loop reports as "paused" — stopped
at a step boundary with every tool call of the last batch committed, so a resume can continue.
`halt(reason)` is `abandon()` for a run that must not go on at all (its record can no longer be
written): besides stopping at the next boundary, no tool call of the current step that has not
started yet starts, and the loop reports `reason` (the first one given) as the run's error.

A model request is the one thing that may be cut mid-way: it has no side effect, so waiting for
it only delays a person's stop. `interruptible()` wraps it: `abandon()` cancels the scope at once
and the request ends with `PauseAbandonedError` (the run then stops as "paused", the request's
partial reply discarded). Tool batches are never wrapped — they finish or drain.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import anyio

from yagent.agents.activity import Monitor


class PauseAbandonedError(Exception):
    """The run was paused and then abandoned; it stopped cleanly at a step boundary."""


class PauseGate:
    def __init__(self) -> None:
        self._paused = False
        self._abandoned = False
        self._halted = ""
        self._changed = anyio.Event()
        self._requests: set[anyio.CancelScope] = set()

    @property
    def paused(self) -> bool:
        return self._paused

    @property
    def abandoned(self) -> bool:
        """True once `abandon()` was called: the run stops at its next step boundary."""
        return self._abandoned

    @property
    def halted(self) -> str:
        """Why the run was halted ("" when it was not): no further tool call starts."""
        return self._halted

    def halt(self, reason: str) -> None:
        self._halted = self._halted or reason
        self.abandon()

    def pause(self) -> None:
        self._paused = True

    def resume(self) -> None:
        self._paused = False
        self._changed.set()

    def abandon(self) -> None:
        self._abandoned = True
        self._changed.set()
        for scope in list(self._requests):
            scope.cancel()

    @contextmanager
    def interruptible(self) -> Iterator[None]:
        """A model request that `abandon()` cuts at once (`PauseAbandonedError` after it)."""
        if self._abandoned:
            raise PauseAbandonedError("the run was stopped before its model request")
        scope = anyio.CancelScope()
        self._requests.add(scope)
        try:
            with scope:
                yield
        finally:
            self._requests.discard(scope)
        if scope.cancelled_caught:
            raise PauseAbandonedError("the run was stopped during its model request")

    async def wait(self, monitor: Monitor | None = None) -> None:
        if self._abandoned:
            raise PauseAbandonedError(self._halted or "the run was abandoned while paused")
        if not self._paused:
            return
        if monitor is not None:
            monitor.pause()
        try:
            while self._paused and not self._abandoned:
                self._changed = anyio.Event()
                await self._changed.wait()
        finally:
            if monitor is not None:
                monitor.resume()
        if self._abandoned:
            raise PauseAbandonedError(self._halted or "the run was abandoned while paused")
