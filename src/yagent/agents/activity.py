"""activity: an idle/total watchdog for a run, with pause and resume along the parent chain.

Contract:
- `heartbeat()` renews the idle timer only — its own and its ancestors' (a child's activity
  heartbeats its parent's monitor); the total timer counts from creation and nothing renews it.
- `pause()` / `resume()` walk the parent chain: pausing a child also freezes its ancestors (a long
  pause must not trip an outer watchdog). While paused, neither timer advances.
- `resume()` moves the idle baseline to the resume time (so the first check after a long pause does
  not see the pause as idleness) and shifts the total by the paused time; resume when not paused is
  a no-op and does not count as a heartbeat.
- `expired()` says which limit passed; `watch()` runs the checks and cancels the watched scope,
  recording the cause, and `raise_if_expired()` turns it into `IdleTimeoutError` /
  `TotalTimeoutError` — distinguishable from a person's cancel.
Time comes from an injectable clock.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import anyio


class ActivityTimeoutError(Exception):
    def __init__(self, limit: float, elapsed: float) -> None:
        super().__init__(f"{self.what} after {elapsed:.1f}s (limit {limit:g}s)")
        self.limit = limit
        self.elapsed = elapsed

    what = "timed out"


class IdleTimeoutError(ActivityTimeoutError):
    what = "no activity"


class TotalTimeoutError(ActivityTimeoutError):
    what = "total time exceeded"


class Monitor:
    def __init__(
        self,
        *,
        idle: float | None = None,
        total: float | None = None,
        clock: Callable[[], float] = time.monotonic,
        parent: Monitor | None = None,
    ) -> None:
        self._idle = idle
        self._total = total
        self._clock = clock
        self.parent = parent
        now = clock()
        self._start = now
        self._last = now
        self._paused_at: float | None = None
        self._paused_total = 0.0
        self.cause: ActivityTimeoutError | None = None

    @property
    def paused(self) -> bool:
        return self._paused_at is not None

    def heartbeat(self) -> None:
        """Renew the idle timer of this monitor and of every ancestor (a delegated run's
        activity is its delegator's too: waiting on a busy child is not idleness)."""
        node: Monitor | None = self
        while node is not None:
            if node._paused_at is None:
                node._last = node._clock()
            node = node.parent

    def pause(self) -> None:
        node: Monitor | None = self
        while node is not None:
            if node._paused_at is None:
                node._paused_at = node._clock()
            node = node.parent

    def resume(self) -> None:
        node: Monitor | None = self
        while node is not None:
            if node._paused_at is not None:
                now = node._clock()
                node._paused_total += now - node._paused_at
                node._paused_at = None
                node._last = now
            node = node.parent

    def idle_for(self) -> float:
        if self._paused_at is not None:
            return self._paused_at - self._last
        return self._clock() - self._last

    def elapsed(self) -> float:
        end = self._paused_at if self._paused_at is not None else self._clock()
        return end - self._start - self._paused_total

    def expired(self) -> ActivityTimeoutError | None:
        total = self.elapsed()
        if self._total is not None and total >= self._total:
            return TotalTimeoutError(self._total, total)
        idle = self.idle_for()
        if self._idle is not None and idle >= self._idle:
            return IdleTimeoutError(self._idle, idle)
        return None

    async def watch(self, scope: anyio.CancelScope, *, interval: float = 0.5) -> None:
        """Check every `interval` seconds; on expiry record the cause and cancel `scope`."""
        while True:
            cause = self.expired()
            if cause is not None:
                self.cause = cause
                scope.cancel()
                return
            await anyio.sleep(interval)

    def raise_if_expired(self) -> None:
        if self.cause is not None:
            raise self.cause
