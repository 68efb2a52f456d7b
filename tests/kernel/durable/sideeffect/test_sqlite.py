"""SqliteStore beyond the contract suite: durability, schema, locking, failure modes, races."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path
from typing import Any

import anyio
import pytest

from yagent.kernel.durable import sqlitefile
from yagent.kernel.durable.sideeffect import (
    Action,
    InvalidArgumentError,
    Lease,
    Outcome,
    SqliteStore,
    State,
    StoreError,
)
from yagent.kernel.durable.sideeffect import sqlite as sqlite_module
from yagent.kernel.testing import sidetest

ACT = Action("k1", "res")


def _raw(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(path, isolation_level=None)


@pytest.mark.anyio
async def test_records_survive_reopening(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with SqliteStore(path) as store:
        grant = await store.acquire(ACT, "A", 60)
        assert grant.lease is not None
        await store.complete(grant.lease, b"\x00bytes\xff")
        await store.acquire(Action("k2", "res"), "A", 60)  # left in flight
    with SqliteStore(path) as again:
        done = await again.acquire(ACT, "B", 60)
        assert (done.outcome, done.result) == (Outcome.ALREADY_DONE, b"\x00bytes\xff")
        record = await again.lookup("k2")
        assert record is not None
        assert record.state is State.IN_FLIGHT
        assert record.fence == 2


def test_runs_in_wal_mode_with_the_chosen_sync_level(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with SqliteStore(path, synchronous="normal") as store:
        assert store._db._conn is not None
        assert store._db._conn.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
    conn = _raw(path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()
    with SqliteStore(path) as store:
        assert store._db._conn is not None
        assert store._db._conn.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL


def test_schema_creation_is_idempotent_and_shares_the_file(tmp_path: Path) -> None:
    path = tmp_path / "shared.db"
    conn = _raw(path)
    conn.execute("CREATE TABLE other_store (x INTEGER)")
    conn.close()
    for _ in range(3):
        SqliteStore(path).close()
    conn = _raw(path)
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"other_store", "sideeffect_keys", "sideeffect_gates", "sideeffect_schema"} <= tables
    assert conn.execute("SELECT count(*) FROM sideeffect_schema").fetchone()[0] == 1
    conn.close()


def test_unknown_schema_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    SqliteStore(path).close()
    conn = _raw(path)
    conn.execute("UPDATE sideeffect_schema SET version = 99")
    conn.close()
    with pytest.raises(StoreError, match="schema version 99"):
        SqliteStore(path)


@pytest.mark.anyio
async def test_a_row_in_an_unknown_state_is_refused_not_misread(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with SqliteStore(path) as store:
        await store.acquire(ACT, "A", 60)
        conn = _raw(path)
        conn.execute("UPDATE sideeffect_keys SET state = 'half_done'")
        conn.close()
        with pytest.raises(StoreError, match="unreadable row"):
            await store.lookup("k1")
        with pytest.raises(StoreError, match="unreadable row"):
            await store.acquire(ACT, "B", 60)
        with pytest.raises(StoreError, match="unreadable row"):
            await store.pending()


@pytest.mark.anyio
async def test_a_lock_held_past_the_busy_timeout_is_a_store_error(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with SqliteStore(path, busy_timeout=0.05) as store:
        blocker = _raw(path)
        blocker.execute("BEGIN IMMEDIATE")
        with pytest.raises(StoreError, match="cannot begin"):
            await store.acquire(ACT, "A", 60)
        assert (await store.lookup("k1")) is None  # readers are not blocked in WAL mode
        blocker.execute("ROLLBACK")
        blocker.close()
        assert (await store.acquire(ACT, "A", 60)).granted


@pytest.mark.anyio
async def test_a_failing_statement_rolls_back_and_is_a_store_error(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with SqliteStore(path) as store:
        conn = _raw(path)
        conn.execute("DROP TABLE sideeffect_gates")
        conn.close()
        with pytest.raises(StoreError, match="transaction failed"):
            await store.acquire(ACT, "A", 60)
        assert (await store.lookup("k1")) is None  # the key row was not written either


@pytest.mark.anyio
async def test_closed_store_refuses_and_close_is_idempotent(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "s.db")
    store.close()
    store.close()
    with pytest.raises(StoreError, match="closed"):
        await store.acquire(ACT, "A", 60)


@pytest.mark.anyio
async def test_in_memory_database_works_for_one_process() -> None:
    with SqliteStore(":memory:") as store:
        assert (await store.acquire(ACT, "A", 60)).granted


def test_unopenable_path_is_a_store_error(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="cannot open"):
        SqliteStore(tmp_path / "missing-dir" / "s.db")


def test_a_file_that_cannot_run_wal_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    class NoWal(sqlite3.Connection):
        def execute(self, sql: str, *args: Any) -> sqlite3.Cursor:
            if sql.startswith("PRAGMA journal_mode"):
                return super().execute("SELECT 'delete'")
            return super().execute(sql, *args)

    real = sqlite3.connect
    monkeypatch.setattr(
        sqlite_module.sqlite3, "connect", lambda *a, **k: real(*a, **k, factory=NoWal)
    )
    with pytest.raises(StoreError, match="cannot run in WAL mode"):
        SqliteStore(tmp_path / "s.db")


@pytest.mark.parametrize(
    "kwargs",
    [{"synchronous": "OFF"}, {"busy_timeout": -1}, {"busy_timeout": "1"}, {"busy_timeout": True}],
)
def test_unsafe_or_invalid_settings_are_refused(tmp_path: Path, kwargs: dict[str, Any]) -> None:
    with pytest.raises(InvalidArgumentError):
        SqliteStore(tmp_path / "s.db", **kwargs)


@pytest.mark.anyio
async def test_concurrent_tasks_on_one_store_get_one_grant(tmp_path: Path) -> None:
    with SqliteStore(tmp_path / "s.db") as store:
        outcomes: list[Outcome] = []

        async def contend(i: int) -> None:
            outcomes.append((await store.acquire(ACT, f"h{i}", 60)).outcome)

        async with anyio.create_task_group() as tg:
            for i in range(20):
                tg.start_soon(contend, i)
        assert outcomes.count(Outcome.GRANTED) == 1
        assert outcomes.count(Outcome.CONTENDED) == 19


def test_racing_connections_in_threads_get_one_grant_per_round(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    SqliteStore(path).close()
    rounds, workers = 15, 4
    grants: list[tuple[int, int]] = []
    barrier = threading.Barrier(workers)
    lock = threading.Lock()

    def worker(n: int) -> None:
        with SqliteStore(path) as store:
            for r in range(rounds):
                barrier.wait()
                got = anyio.run(store.acquire, Action(f"k{r}", f"res{r % 3}"), f"w{n}", 60.0)
                if got.lease is not None:
                    with lock:
                        grants.append((r, got.lease.fence))
                    anyio.run(store.complete, got.lease, b"")

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(r for r, _ in grants) == list(range(rounds))
    by_resource: dict[int, list[int]] = {}
    for r, fence in sorted(grants):
        by_resource.setdefault(r % 3, []).append(fence)
    assert all(f == list(range(1, len(f) + 1)) for f in by_resource.values())


@pytest.mark.anyio
async def test_pending_reports_truncation(tmp_path: Path) -> None:
    clock = sidetest.FakeClock()
    with SqliteStore(tmp_path / "s.db", clock=clock) as store:
        for i in range(3):
            await store.acquire(Action(f"k{i}", f"r{i}"), "A", 1)
        clock.advance(2)
        page = await store.pending(limit=2)
        assert ([r.key for r in page.records], page.truncated) == (["k0", "k1"], True)
        full = await store.pending(limit=3)
        assert (len(full.records), full.truncated) == (3, False)


@pytest.mark.anyio
async def test_operations_validate_their_arguments(tmp_path: Path) -> None:
    with SqliteStore(tmp_path / "s.db") as store:
        lease = Lease("k", "r", 1, "h", 1.0)
        bad: list[Any] = [
            store.acquire(ACT, "", 60),
            store.acquire(ACT, "A", 0),
            store.acquire(ACT, "A", float("inf")),
            store.acquire("k1", "A", 60),  # type: ignore[arg-type]
            store.renew("lease", 60),  # type: ignore[arg-type]
            store.complete(lease, "text"),  # type: ignore[arg-type]
            store.resolve_uncertain(ACT, "yes"),  # type: ignore[arg-type]
            store.resolve_uncertain(ACT, True, "text"),  # type: ignore[arg-type]
            store.lookup(""),
            store.pending(0),
            store.pending(True),
        ]
        for call in bad:
            with pytest.raises(InvalidArgumentError):
                await call
        with pytest.raises(InvalidArgumentError):
            store.set_clock(object())  # type: ignore[arg-type]


@pytest.mark.parametrize("content", [b"", b"not a database at all, just text" * 200])
def test_an_empty_or_damaged_file_is_refused_and_left_alone(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "s.db"
    path.write_bytes(content)
    with pytest.raises(sqlitefile.UnusableFileError, match=r"s\.db"):
        SqliteStore(path)
    assert path.read_bytes() == content, "never written over"
