"""Committer: grab seq → save → give the seq back only on failure, serialised per run."""

from __future__ import annotations

from collections.abc import Sequence

import anyio
import pytest

from yagent.kernel.durable.checkpoint import (
    Committer,
    InvalidArgumentError,
    MemoryStore,
    RunProgress,
    RunState,
    StaleSeqError,
    StepRecord,
    StepStatus,
)

PENDING = [StepRecord("a", StepStatus.PENDING)]


class FlakyStore(MemoryStore):
    """Fails the next `fail` saves, and can stall saves to expose interleavings."""

    def __init__(self) -> None:
        super().__init__()
        self.fail = 0
        self.saved: list[int] = []
        self.stall = False

    async def save_if_newer(self, snapshot: RunProgress) -> None:
        if self.stall:
            await anyio.sleep(0.001 * (5 - snapshot.seq % 5))  # later seqs would finish first
        if self.fail:
            self.fail -= 1
            raise OSError("disk full")
        await super().save_if_newer(snapshot)
        self.saved.append(snapshot.seq)


@pytest.mark.anyio
async def test_commits_take_consecutive_seqs_and_return_the_saved_snapshot() -> None:
    store = MemoryStore()
    committer = Committer(store, "r1")
    first = await committer.commit(RunState.ACTIVE, PENDING)
    second = await committer.commit(
        RunState.SUCCEEDED, [StepRecord("a", StepStatus.COMPLETED, "d")]
    )
    assert (first.seq, second.seq, committer.last_seq) == (1, 2, 2)
    assert await store.load("r1") == second
    assert first == RunProgress("r1", 1, RunState.ACTIVE, tuple(PENDING))


@pytest.mark.anyio
async def test_a_failed_save_gives_the_seq_back_and_a_success_keeps_it() -> None:
    store = FlakyStore()
    committer = Committer(store, "r1")
    await committer.commit(RunState.ACTIVE, PENDING)
    store.fail = 1
    with pytest.raises(OSError, match="disk full"):
        await committer.commit(RunState.ACTIVE, PENDING)
    assert committer.last_seq == 1  # given back: no gap
    again = await committer.commit(RunState.ACTIVE, PENDING)
    assert again.seq == 2  # the seq the failed attempt grabbed
    assert store.saved == [1, 2]
    # a success is never rolled back: the next commit does not collide with the stored seq
    assert (await committer.commit(RunState.ACTIVE, PENDING)).seq == 3


@pytest.mark.anyio
async def test_an_invalid_snapshot_grabs_nothing() -> None:
    store = MemoryStore()
    committer = Committer(store, "r1")
    with pytest.raises(InvalidArgumentError):
        await committer.commit(RunState.ACTIVE, [StepRecord("a", StepStatus.PENDING)] * 2)
    assert committer.last_seq == 0
    assert (await committer.commit(RunState.ACTIVE, PENDING)).seq == 1


@pytest.mark.anyio
async def test_concurrent_commits_are_saved_in_order() -> None:
    store = FlakyStore()
    store.stall = True
    committer = Committer(store, "r1")
    async with anyio.create_task_group() as tg:
        for _ in range(10):
            tg.start_soon(committer.commit, RunState.ACTIVE, PENDING)
    assert store.saved == list(range(1, 11))


@pytest.mark.anyio
async def test_a_rival_writer_ahead_is_refused_not_followed_until_resync() -> None:
    store = MemoryStore()
    ahead = Committer(store, "r1", last_seq=6)
    await ahead.commit(RunState.ACTIVE, PENDING)
    behind = await Committer.open(store, "r2")
    assert behind.last_seq == 0
    lagging = Committer(store, "r1", last_seq=3)
    with pytest.raises(StaleSeqError):
        await lagging.commit(RunState.FAILED, [])
    with pytest.raises(StaleSeqError):
        await lagging.commit(RunState.FAILED, [])
    assert lagging.last_seq == 3
    assert await lagging.resync() == 7
    assert (await lagging.commit(RunState.FAILED, [])).seq == 8
    assert await Committer(MemoryStore(), "r9").resync() == 0


@pytest.mark.anyio
async def test_open_continues_after_the_stored_snapshot() -> None:
    store = MemoryStore()
    await Committer(store, "r1", last_seq=41).commit(RunState.ACTIVE, [])
    reopened = await Committer.open(store, "r1")
    assert reopened.last_seq == 42
    assert (await reopened.commit(RunState.ACTIVE, [])).seq == 43


@pytest.mark.parametrize(
    ("run_id", "last"), [("", 0), (None, 0), ("r", -1), ("r", True), ("r", 1.5)]
)
def test_invalid_committer_arguments_are_refused(run_id: object, last: object) -> None:
    with pytest.raises(InvalidArgumentError):
        Committer(MemoryStore(), run_id, last_seq=last)  # type: ignore[arg-type]


@pytest.mark.anyio
async def test_an_uncontended_commit_does_not_yield_to_other_tasks() -> None:
    # A run checkpoints every step: an uncontended commit over a store that does not wait is
    # one synchronous step, not a trip through the event loop (another task runs after it).
    committer = Committer(MemoryStore(), "r1")
    ran: list[str] = []

    async def other() -> None:
        ran.append("other")

    async with anyio.create_task_group() as tg:
        tg.start_soon(other)
        await committer.commit(RunState.ACTIVE, PENDING)
        await committer.commit_steps(RunState.ACTIVE, PENDING)
        ran.append("committed")
    assert ran == ["committed", "other"]
    assert committer.last_seq == 2


class StallingSteps(MemoryStore):
    def __init__(self) -> None:
        super().__init__()
        self.saved: list[int] = []

    async def save_steps_if_newer(
        self, run_id: str, seq: int, state: RunState, steps: Sequence[StepRecord]
    ) -> None:
        await anyio.sleep(0.001 * (5 - seq % 5))  # later seqs would finish first
        await super().save_steps_if_newer(run_id, seq, state, steps)
        self.saved.append(seq)


@pytest.mark.anyio
async def test_concurrent_step_commits_wait_for_each_other_in_order() -> None:
    store = StallingSteps()
    committer = Committer(store, "r1")
    async with anyio.create_task_group() as tg:
        for _ in range(10):
            tg.start_soon(committer.commit_steps, RunState.ACTIVE, PENDING)
    assert store.saved == list(range(1, 11))
    assert committer.last_seq == 10
