"""checkpoint suite: the contract cases every `StoreCAS` implementation runs.

Guarantees: nine named cases, each one clause of the `StoreCAS` contract (and of the `Committer`
driving it), run on a fresh store from the host's factory. A case fails by raising
`ContractViolation` (an `AssertionError` that survives `python -O`); nothing ever skips — an
object that is not a `StoreCAS` is itself a violation.
Use with pytest: `TestSqliteCAS = suite(lambda d: SqliteStore(d / "c.db"), name="SqliteCAS")`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio

from yagent.kernel.durable.checkpoint.committer import Committer
from yagent.kernel.durable.checkpoint.errors import (
    CheckpointError,
    InvalidArgumentError,
    StaleSeqError,
)
from yagent.kernel.durable.checkpoint.store import StepsCAS, StoreCAS
from yagent.kernel.durable.checkpoint.types import (
    RunProgress,
    RunState,
    StepRecord,
    StepStatus,
    digest,
)
from yagent.kernel.testing import contractsuite
from yagent.kernel.testing.contractsuite import Case as Case
from yagent.kernel.testing.contractsuite import ContractViolation as ContractViolation
from yagent.kernel.testing.contractsuite import expect as expect

StoreFactory = Callable[[Path], StoreCAS]


async def refused(what: str, call: Awaitable[Any]) -> None:
    try:
        await call
    except StaleSeqError:
        return
    raise ContractViolation(f"{what} was accepted; the contract refuses it with StaleSeqError")


def snap(run: str, seq: int, *done: str, state: RunState = RunState.ACTIVE) -> RunProgress:
    steps = tuple(StepRecord(s, StepStatus.COMPLETED, digest(s.encode())) for s in done)
    return RunProgress(run, seq, state, (*steps, StepRecord("tail", StepStatus.RUNNING)))


async def unknown_run_loads_none(store: StoreCAS) -> None:
    expect(await store.load("nobody") is None, "a run never saved must load as None")


async def round_trip_is_exact(store: StoreCAS) -> None:
    saved = RunProgress(
        "r1",
        3,
        RunState.FAILED,
        (
            StepRecord("b", StepStatus.COMPLETED, digest(b"\x00\xff"), "détail ✓"),
            StepRecord("a", StepStatus.FAILED, detail="boom"),
            StepRecord("c", StepStatus.PENDING),
        ),
    )
    await store.save_if_newer(saved)
    got = await store.load("r1")
    expect(got == saved, f"loaded {got}, saved {saved}")


async def seq_zero_is_refused(store: StoreCAS) -> None:
    await refused("seq 0 on an empty store", store.save_if_newer(snap("r1", 0, "a")))
    expect(await store.load("r1") is None, "a refused seq-0 snapshot was written")
    await store.save_if_newer(snap("r1", 5, "a"))
    await refused("seq 0 after seq 5", store.save_if_newer(snap("r1", 0, "x")))
    expect(await store.load("r1") == snap("r1", 5, "a"), "seq 0 displaced the stored snapshot")


async def not_newer_is_refused(store: StoreCAS) -> None:
    await store.save_if_newer(snap("r1", 4, "a"))
    await refused("an equal seq", store.save_if_newer(snap("r1", 4, "a", "b")))
    await refused("an older seq", store.save_if_newer(snap("r1", 2, "a", "b", "c")))
    expect(await store.load("r1") == snap("r1", 4, "a"), "a refused snapshot changed the store")


async def newer_replaces_with_gaps(store: StoreCAS) -> None:
    await store.save_if_newer(snap("r1", 1))
    await store.save_if_newer(snap("r1", 7, "a", state=RunState.SUCCEEDED))
    got = await store.load("r1")
    expect(got == snap("r1", 7, "a", state=RunState.SUCCEEDED), f"newest not stored: {got}")


async def runs_are_independent(store: StoreCAS) -> None:
    await store.save_if_newer(snap("r1", 9, "a"))
    await store.save_if_newer(snap("r2", 1, "b"))
    expect(await store.load("r1") == snap("r1", 9, "a"), "run r1 was disturbed by r2")
    expect(await store.load("r2") == snap("r2", 1, "b"), "run r2 was judged against r1's seq")


async def concurrent_same_seq_one_winner(store: StoreCAS) -> None:
    wins: list[str] = []

    async def save(i: int) -> None:
        try:
            await store.save_if_newer(snap("r1", 1, f"s{i}"))
        except StaleSeqError:
            return
        wins.append(f"s{i}")

    async with anyio.create_task_group() as tg:
        for i in range(16):
            tg.start_soon(save, i)
    expect(len(wins) == 1, f"exactly one save of seq 1 may win, got {wins}")
    expect(
        await store.load("r1") == snap("r1", 1, wins[0]), "the stored snapshot is not the winner"
    )


async def committer_sequence(store: StoreCAS) -> None:
    first = await Committer.open(store, "r1")
    one = await first.commit(RunState.ACTIVE, [StepRecord("a", StepStatus.RUNNING)])
    two = await first.commit(RunState.ACTIVE, [StepRecord("a", StepStatus.COMPLETED, "d")])
    expect((one.seq, two.seq, first.last_seq) == (1, 2, 2), "commits must take seqs 1, 2")
    rival = Committer(store, "r1")
    await refused("a commit behind the stored seq", rival.commit(RunState.FAILED, []))
    expect(rival.last_seq == 0, "a refused commit advanced the committer")
    expect(await rival.resync() == 2, "resync must adopt the stored seq")
    done = await rival.commit(RunState.SUCCEEDED, [])
    expect(done.seq == 3 and await store.load("r1") == done, "after resync the commit lands")


async def steps_merge_over_the_stored_snapshot(store: StoreCAS) -> None:
    committer = await Committer.open(store, "r1")
    running = StepRecord("1", StepStatus.RUNNING, detail="loaded")
    if not isinstance(store, StepsCAS):  # then the committer must say it cannot
        try:
            await committer.commit_steps(RunState.ACTIVE, [running])
        except InvalidArgumentError:
            return
        raise ContractViolation("commit_steps was accepted on a store that is not a StepsCAS")
    done = StepRecord("1", StepStatus.COMPLETED, digest(b"1"))
    second = StepRecord("2", StepStatus.RUNNING)
    for change in ([running], [done], [second]):
        await committer.commit_steps(RunState.ACTIVE, change)
    want = RunProgress("r1", 3, RunState.ACTIVE, (done, second))
    expect(await store.load("r1") == want, "the changed steps did not merge over the stored ones")
    await store.save_if_newer(RunProgress("r1", 4, RunState.ACTIVE, (second,)))  # a whole one
    ended = StepRecord("2", StepStatus.COMPLETED, digest(b"2"))
    await store.save_steps_if_newer("r1", 5, RunState.SUCCEEDED, [ended])
    want = RunProgress("r1", 5, RunState.SUCCEEDED, (ended,))
    expect(await store.load("r1") == want, "a whole snapshot did not replace the steps before it")
    behind = store.save_steps_if_newer("r1", 5, RunState.FAILED, [running])
    await refused("a step change at the stored seq", behind)
    expect(await store.load("r1") == want, "a refused step change changed the store")


CASES: tuple[Case, ...] = tuple(
    Case(fn.__name__, fn)
    for fn in (
        unknown_run_loads_none,
        round_trip_is_exact,
        seq_zero_is_refused,
        not_newer_is_refused,
        newer_replaces_with_gaps,
        runs_are_independent,
        concurrent_same_seq_one_winner,
        committer_sequence,
        steps_merge_over_the_stored_snapshot,
    )
)


def _start(store: StoreCAS) -> tuple[StoreCAS]:
    if not isinstance(store, StoreCAS):
        raise ContractViolation(f"{type(store).__name__} is not a checkpoint StoreCAS")
    return (store,)


def run_case(case: Case | str, factory: StoreFactory, scratch: Path | None = None) -> None:
    """Run one case on a fresh store; `ContractViolation` naming the case on failure."""
    chosen = contractsuite.named("checkpoint suite", case, CASES)
    contractsuite.run_case("checkpoint suite", chosen, factory, scratch, _start, CheckpointError)


def suite(factory: StoreFactory, *, name: str = "CheckpointContract") -> type:
    """A pytest-collectable class with one `test_<case>` per case (assign it to a `Test…` name)."""
    return contractsuite.pytest_class(
        name,
        f"The checkpoint StoreCAS suite on {name}.",
        CASES,
        lambda case, tmp: run_case(case, factory, tmp),
    )
