"""The StoreCAS suite on every store, the suite's own teeth, and the SQLite store's specifics."""

from __future__ import annotations

import itertools
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from collections.abc import Sequence
from pathlib import Path

import anyio
import anyio.lowlevel
import pytest

from yagent.kernel.durable.checkpoint import (
    Committer,
    InvalidArgumentError,
    MemoryStore,
    RunProgress,
    RunState,
    SqliteStore,
    StaleSeqError,
    StepDef,
    StepRecord,
    StepsCAS,
    StepStatus,
    StoreCAS,
    StoreError,
    decide,
    digest,
)
from yagent.kernel.testing import checkpointsuite as suite
from yagent.kernel.testing.checkpointsuite import CASES, ContractViolation, run_case


class TwoConnections:
    """A StoreCAS sending each operation to the next of two SqliteStores on one file."""

    def __init__(self, path: Path) -> None:
        self.stores = (SqliteStore(path), SqliteStore(path))
        self._turn = itertools.cycle(self.stores)

    def close(self) -> None:
        for store in self.stores:
            store.close()

    async def load(self, run_id: str) -> RunProgress | None:
        return await next(self._turn).load(run_id)

    async def save_if_newer(self, snapshot: RunProgress) -> None:
        await next(self._turn).save_if_newer(snapshot)

    async def save_steps_if_newer(
        self, run_id: str, seq: int, state: RunState, steps: Sequence[StepRecord]
    ) -> None:
        await next(self._turn).save_steps_if_newer(run_id, seq, state, steps)


TestMemoryCAS = suite.suite(lambda _: MemoryStore(), name="MemoryCAS")
TestSqliteCAS = suite.suite(lambda d: SqliteStore(d / "c.db"), name="SqliteCAS")
TestSqliteTwoConnectionsCAS = suite.suite(lambda d: TwoConnections(d / "c.db"), name="TwoConnCAS")


class AcceptsZero(MemoryStore):
    async def save_if_newer(self, snapshot: RunProgress) -> None:
        if snapshot.seq == 0:
            self._runs[snapshot.run_id] = snapshot
            return
        await super().save_if_newer(snapshot)


class AcceptsEqual(MemoryStore):
    async def save_if_newer(self, snapshot: RunProgress) -> None:
        stored = self._runs.get(snapshot.run_id)
        if stored is not None and stored.seq == snapshot.seq:
            self._runs[snapshot.run_id] = snapshot
            return
        await super().save_if_newer(snapshot)


class OneSeqForAll(MemoryStore):
    """Judges every run against one global seq (a store keyed wrongly)."""

    async def save_if_newer(self, snapshot: RunProgress) -> None:
        top = max((s.seq for s in self._runs.values()), default=0)
        if snapshot.seq <= top:
            raise StaleSeqError(snapshot.run_id, snapshot.seq, top)
        await super().save_if_newer(snapshot)


class Amnesiac(MemoryStore):
    """Saves correctly but loads nothing."""

    async def load(self, run_id: str) -> RunProgress | None:
        return None


class CheckThenWrite(MemoryStore):
    """Compares and writes in two steps with a yield between: the lost-update race."""

    async def save_if_newer(self, snapshot: RunProgress) -> None:
        stored = self._runs.get(snapshot.run_id)
        if snapshot.seq == 0 or (stored is not None and snapshot.seq <= stored.seq):
            raise StaleSeqError(snapshot.run_id, snapshot.seq, None)
        await anyio.lowlevel.checkpoint()
        self._runs[snapshot.run_id] = snapshot


class StepsReplaceAll(MemoryStore):
    """Saves the changed steps as if they were the whole snapshot (the merge forgotten)."""

    async def save_steps_if_newer(
        self, run_id: str, seq: int, state: RunState, steps: Sequence[StepRecord]
    ) -> None:
        await self.save_if_newer(RunProgress(run_id, seq, state, tuple(steps)))


@pytest.mark.parametrize(
    ("store", "case"),
    [
        (AcceptsZero, "seq_zero_is_refused"),
        (AcceptsEqual, "not_newer_is_refused"),
        (OneSeqForAll, "runs_are_independent"),
        (CheckThenWrite, "concurrent_same_seq_one_winner"),
        (Amnesiac, "committer_sequence"),
        (StepsReplaceAll, "steps_merge_over_the_stored_snapshot"),
    ],
)
def test_the_suite_goes_red_on_the_store_that_breaks_its_clause(
    store: type[MemoryStore], case: str, tmp_path: Path
) -> None:
    with pytest.raises(ContractViolation, match=case):
        run_case(case, lambda _: store(), tmp_path)


def test_an_object_that_is_not_a_store_is_a_violation_never_a_skip() -> None:
    with pytest.raises(ContractViolation, match="not a checkpoint StoreCAS"):
        run_case(CASES[0], lambda _: object())  # type: ignore[arg-type,return-value]
    with pytest.raises(ValueError, match="no case named"):
        run_case("nope", lambda _: MemoryStore())


def test_the_suite_has_nine_named_cases() -> None:
    assert len({c.name for c in CASES}) == 9
    assert len([n for n in dir(TestSqliteCAS) if n.startswith("test_")]) == 9
    run_case("round_trip_is_exact", lambda _: MemoryStore())  # scratch dir made on demand


def test_both_stores_are_store_cas() -> None:
    assert isinstance(MemoryStore(), StoreCAS)
    with SqliteStore(":memory:") as store:
        assert isinstance(store, StoreCAS)


@pytest.mark.anyio
@pytest.mark.parametrize("bad", ["", None, 3])
async def test_invalid_arguments_are_refused(bad: object, tmp_path: Path) -> None:
    with SqliteStore(tmp_path / "c.db") as sqlite_store:
        for store in (MemoryStore(), sqlite_store):
            with pytest.raises(InvalidArgumentError):
                await store.load(bad)  # type: ignore[arg-type]
            with pytest.raises(InvalidArgumentError):
                await store.save_if_newer(bad)  # type: ignore[arg-type]


@pytest.mark.anyio
async def test_snapshots_survive_reopening_and_share_the_file(tmp_path: Path) -> None:
    path = tmp_path / "shared.db"
    raw = sqlite3.connect(path)
    raw.execute("CREATE TABLE other_store (x INTEGER)")
    raw.commit()
    raw.close()
    saved = RunProgress("r1", 3, RunState.CANCELLED)
    with SqliteStore(path) as store:
        await store.save_if_newer(saved)
    with SqliteStore(path, synchronous="normal") as again:
        assert await again.load("r1") == saved
        with pytest.raises(StaleSeqError):
            await again.save_if_newer(RunProgress("r1", 3, RunState.ACTIVE))
    raw = sqlite3.connect(path)
    tables = {r[0] for r in raw.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"other_store", "checkpoint_snapshots", "checkpoint_schema"} <= tables
    assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    raw.close()


@pytest.mark.anyio
@pytest.mark.parametrize(
    "update",
    [
        "UPDATE checkpoint_snapshots SET state = 'paused'",
        "UPDATE checkpoint_snapshots SET steps = 'garbage'",
        'UPDATE checkpoint_snapshots SET steps = \'[["a", "completed", "", ""]]\'',
        "UPDATE checkpoint_snapshots SET seq = 'x'",
    ],
)
async def test_an_unreadable_row_is_a_store_error_not_a_misread(
    tmp_path: Path, update: str
) -> None:
    path = tmp_path / "c.db"
    with SqliteStore(path) as store:
        await store.save_if_newer(RunProgress("r1", 1, RunState.ACTIVE))
        raw = sqlite3.connect(path)
        raw.execute(update)
        raw.commit()
        raw.close()
        with pytest.raises(StoreError, match="unreadable snapshot"):
            await store.load("r1")


@pytest.mark.anyio
async def test_a_closed_store_refuses(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "c.db")
    store.close()
    with pytest.raises(StoreError, match="closed"):
        await store.load("r1")


RACER = textwrap.dedent(
    """
    import sys, anyio
    from yagent.kernel.durable.checkpoint import RunState, RunProgress, SqliteStore, StaleSeqError

    async def main(path, me):
        won = []
        with SqliteStore(path) as store:
            for seq in range(1, 31):
                try:
                    await store.save_if_newer(RunProgress("r1", seq, RunState.ACTIVE, ()))
                except StaleSeqError:
                    continue
                won.append(seq)
        print(" ".join(map(str, won)))

    anyio.run(main, sys.argv[1], sys.argv[2])
    """
)


@pytest.mark.slow
def test_processes_racing_on_one_file_never_both_win_a_seq(tmp_path: Path) -> None:
    path = tmp_path / "race.db"
    SqliteStore(path).close()
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", RACER, str(path), str(i)], stdout=subprocess.PIPE, text=True
        )
        for i in range(4)
    ]
    wins: list[int] = []
    for proc in procs:
        out, _ = proc.communicate(timeout=60)
        assert proc.returncode == 0
        wins.extend(int(s) for s in out.split())
    assert sorted(wins) == sorted(set(wins))  # no seq saved twice
    assert max(wins) == 30


WRITER = textwrap.dedent(
    """
    import sys, anyio
    from yagent.kernel.durable.checkpoint import (
        Committer, RunState, SqliteStore, StepRecord, StepStatus, digest,
    )

    async def main(path):
        with SqliteStore(path) as store:
            committer = await Committer.open(store, "r1")
            n = 0
            while True:
                n += 1
                done = StepStatus.COMPLETED
                steps = [StepRecord(f"s{i}", done, digest(b"%d" % i)) for i in range(n)]
                await committer.commit(RunState.ACTIVE, steps)

    anyio.run(main, sys.argv[1])
    """
)


@pytest.mark.slow
def test_a_writer_killed_mid_stream_leaves_a_whole_snapshot_to_continue_from(
    tmp_path: Path,
) -> None:
    path = tmp_path / "kill.db"
    SqliteStore(path).close()
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(path)])
    try:
        deadline = time.monotonic() + 60
        seq = 0
        while seq < 25 and time.monotonic() < deadline and proc.poll() is None:
            raw = sqlite3.connect(path)
            row = raw.execute("SELECT seq FROM checkpoint_snapshots").fetchone()
            raw.close()
            seq = 0 if row is None else row[0]
        assert seq >= 25, "the writer made no progress"
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()

    async def verify() -> None:
        with SqliteStore(path) as store:
            snap = await store.load("r1")
            assert snap is not None
            assert snap.seq >= 25
            assert len(snap.steps) == snap.seq  # the n-th commit recorded n steps: never torn
            plan = [StepDef(f"s{i}") for i in range(snap.seq + 3)]
            resume = decide("r1", plan, snap)
            assert len(resume.trusted) == snap.seq
            assert resume.todo == tuple(f"s{i}" for i in range(snap.seq, snap.seq + 3))
            after = await Committer.open(store, "r1")
            assert (await after.commit(RunState.SUCCEEDED, snap.steps)).seq == snap.seq + 1

    anyio.run(verify)


@pytest.mark.anyio
async def test_a_file_of_schema_1_is_read_and_then_saved_by_changes(tmp_path: Path) -> None:
    path = tmp_path / "c.db"
    old = RunProgress("r1", 3, RunState.ACTIVE, (StepRecord("1", StepStatus.RUNNING, detail="d"),))
    conn = sqlite3.connect(path)  # the file as schema-1 code left it
    conn.executescript(
        "CREATE TABLE checkpoint_schema (version INTEGER NOT NULL);"
        "INSERT INTO checkpoint_schema VALUES (1);"
        "CREATE TABLE checkpoint_snapshots (run_id TEXT PRIMARY KEY, seq INTEGER NOT NULL,"
        " state TEXT NOT NULL, steps TEXT NOT NULL);"
    )
    row = ("r1", 3, "active", '[["1","running","","d"]]')
    conn.execute("INSERT INTO checkpoint_snapshots VALUES (?, ?, ?, ?)", row)
    conn.commit()
    conn.close()
    store = SqliteStore(path)
    try:
        assert isinstance(store, StepsCAS)
        assert await store.load("r1") == old
        committer = await Committer.open(store, "r1")
        done = StepRecord("1", StepStatus.COMPLETED, "x")
        assert await committer.commit_steps(RunState.ACTIVE, [done]) == 4
        assert await store.load("r1") == RunProgress("r1", 4, RunState.ACTIVE, (done,))
    finally:
        store.close()
    check = sqlite3.connect(path)
    assert check.execute("SELECT version FROM checkpoint_schema").fetchone() == (2,)
    check.close()


@pytest.mark.anyio
async def test_a_step_saved_by_its_change_writes_that_step_only(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "c.db")
    try:
        committer = Committer(store, "r1")
        for n in range(1, 201):
            await committer.commit_steps(RunState.ACTIVE, [StepRecord(str(n), StepStatus.RUNNING)])
        written: list[int] = []
        conn = store._db._connection()
        conn.set_trace_callback(lambda sql: written.append(len(sql)))
        await committer.commit_steps(RunState.ACTIVE, [StepRecord("201", StepStatus.RUNNING)])
        conn.set_trace_callback(None)
        assert max(written) < 400  # no statement carries the 200 steps before it
        snapshot = await store.load("r1")
        assert snapshot is not None
        assert [s.id for s in snapshot.steps] == [str(n) for n in range(1, 202)]
    finally:
        store.close()


@pytest.mark.anyio
async def test_a_step_change_on_a_stored_run_takes_one_statement_for_its_seq(
    tmp_path: Path,
) -> None:
    # the seq check and the snapshot row are one UPDATE when the run is stored and behind
    store = SqliteStore(tmp_path / "c.db", synchronous="NORMAL")
    try:
        committer = Committer(store, "r1")
        await committer.commit_steps(RunState.ACTIVE, [StepRecord("1", StepStatus.RUNNING)])
        statements: list[str] = []
        conn = store._db._connection()
        conn.set_trace_callback(statements.append)
        done = StepRecord("1", StepStatus.COMPLETED, digest(b"1"))
        second = StepRecord("2", StepStatus.RUNNING)
        await committer.commit_steps(RunState.ACTIVE, [done, second])
        conn.set_trace_callback(None)
        body = [s for s in statements if "checkpoint_" in s]
        assert len(body) == 3, body  # the snapshot's seq and state, then each step's row
        assert body[0].startswith("UPDATE checkpoint_snapshots")
        assert await store.load("r1") == RunProgress("r1", 2, RunState.ACTIVE, (done, second))
        # at or below the stored seq, or seq 0: refused and nothing written, stored run or not
        for run, seq in (("r1", 2), ("r1", 1), ("r1", 0), ("r2", 0)):
            with pytest.raises(StaleSeqError):
                await store.save_steps_if_newer(run, seq, RunState.FAILED, [second])
        assert await store.load("r1") == RunProgress("r1", 2, RunState.ACTIVE, (done, second))
        assert await store.load("r2") is None
        await store.save_steps_if_newer("r2", 1, RunState.ACTIVE, [second])  # a new run: inserted
        assert await store.load("r2") == RunProgress("r2", 1, RunState.ACTIVE, (second,))
    finally:
        store.close()
