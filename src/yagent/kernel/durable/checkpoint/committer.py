"""checkpoint committer: grab a seq → save → roll back only on failure, in one call.

Contract: `Committer.commit(state, steps)` is the only way it writes. It takes the next seq
(one above the last seq *this committer saved*), builds the snapshot itself — so no caller can
pair a snapshot with the wrong seq — and saves it through `StoreCAS.save_if_newer`. Only when the
save succeeds does the committer advance; when building or saving fails, the seq is given back,
so a failure never leaves a gap that makes the next commit look like a jump, and a success is
never rolled back into a seq the store already holds (which would wedge every later commit as
stale). Commits of one committer are serialised: snapshot N+1 is never saved before N.
`commit_steps(state, steps)` is the same for a `StepsCAS`: it saves the changed steps only.
A `StaleSeqError` means another writer saved a newer snapshot of the run: the committer does not
silently follow it. `resync()` adopts the stored seq for a host that decided to take over.
An uncontended commit takes its lock without a trip through the event loop (a run commits every
step): over a store that does not wait it runs to its end before any other task; cancellation
reaches it at the store's own waits, as before.
"""

from __future__ import annotations

from collections.abc import Iterable

import anyio

from yagent.kernel.durable.checkpoint.errors import InvalidArgumentError
from yagent.kernel.durable.checkpoint.store import StepsCAS, StoreCAS
from yagent.kernel.durable.checkpoint.types import RunProgress, RunState, StepRecord


class Committer:
    """Writes one run's snapshots in sequence through a `StoreCAS`."""

    def __init__(self, store: StoreCAS, run_id: str, *, last_seq: int = 0) -> None:
        if not isinstance(run_id, str) or not run_id:
            raise InvalidArgumentError(
                f"checkpoint: run id must be a non-empty string, got {run_id!r}"
            )
        if isinstance(last_seq, bool) or not isinstance(last_seq, int) or last_seq < 0:
            raise InvalidArgumentError(
                f"checkpoint: last_seq must be an int >= 0, got {last_seq!r}"
            )
        self._store = store
        # judged once: a runtime Protocol check walks the protocol's members on every call
        self._steps_store = store if isinstance(store, StepsCAS) else None
        self.run_id = run_id
        self._last = last_seq
        self._lock = _Turn()

    @classmethod
    async def open(cls, store: StoreCAS, run_id: str) -> Committer:
        """A committer continuing after the run's stored snapshot (or from the start)."""
        stored = await store.load(run_id)
        return cls(store, run_id, last_seq=0 if stored is None else stored.seq)

    @property
    def last_seq(self) -> int:
        """The seq of the last snapshot this committer saved (or adopted)."""
        return self._last

    async def commit(self, state: RunState, steps: Iterable[StepRecord]) -> RunProgress:
        """Save the run's next snapshot and return it; on any failure nothing advances."""
        async with self._lock:
            seq = self._last + 1
            snapshot = RunProgress(self.run_id, seq, state, tuple(steps))
            await self._store.save_if_newer(snapshot)
            self._last = seq
            return snapshot

    async def commit_steps(self, state: RunState, steps: Iterable[StepRecord]) -> int:
        """Save the run's next snapshot as the stored one with `steps` changed (a `StepsCAS`
        store only); its seq. On any failure nothing advances."""
        store = self._steps_store
        if store is None:
            raise InvalidArgumentError(
                f"checkpoint: {type(self._store).__name__} cannot save steps by their changes"
            )
        async with self._lock:
            seq = self._last + 1
            await store.save_steps_if_newer(self.run_id, seq, state, tuple(steps))
            self._last = seq
            return seq

    async def resync(self) -> int:
        """Adopt the stored seq of the run (after a `StaleSeqError`, when taking over)."""
        async with self._lock:
            stored = await self._store.load(self.run_id)
            self._last = 0 if stored is None else stored.seq
            return self._last


class _Turn:
    """The commit lock: taken at once when free (no yield), waited for in turn otherwise."""

    __slots__ = ("_lock",)

    def __init__(self) -> None:
        self._lock = anyio.Lock()

    async def __aenter__(self) -> None:
        try:
            self._lock.acquire_nowait()
        except anyio.WouldBlock:
            await self._lock.acquire()

    async def __aexit__(self, *exc: object) -> None:
        self._lock.release()
