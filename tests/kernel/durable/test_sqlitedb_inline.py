"""sqlitedb: a transaction that cannot wait long runs on the caller's thread (no worker hop);
one that could wait — for the disk (synchronous FULL) or for another writer — never blocks the
event loop."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import anyio
import pytest
from anyio.abc import TaskStatus

from yagent.kernel.durable.sqlitedb import Database

SCHEMA = ("CREATE TABLE IF NOT EXISTS demo_rows (k TEXT PRIMARY KEY, v INTEGER NOT NULL)",)


class DemoError(Exception):
    pass


def open_db(path: Path, synchronous: str, busy_timeout: float = 10.0) -> Database:
    return Database(
        path,
        prefix="demo",
        version=1,
        schema=SCHEMA,
        error=DemoError,
        synchronous=synchronous,
        busy_timeout=busy_timeout,
    )


def _thread_of_put(conn: sqlite3.Connection) -> int:
    conn.execute("INSERT INTO demo_rows VALUES (?, 1)", (f"k{threading.get_ident()}-{id(conn)}",))
    return threading.get_ident()


def _count(conn: sqlite3.Connection) -> int:
    return int(conn.execute("SELECT count(*) FROM demo_rows").fetchone()[0])


@pytest.mark.anyio
async def test_at_synchronous_normal_a_free_write_lock_means_no_worker_thread(
    tmp_path: Path,
) -> None:
    with open_db(tmp_path / "d.db", "NORMAL") as db:
        here = threading.get_ident()
        assert await db.transact(_thread_of_put, write=True) == here
        assert await db.transact(lambda c: threading.get_ident(), write=False) == here
        assert await db.transact(_count, write=False) == 1


@pytest.mark.anyio
async def test_at_synchronous_full_a_commit_waits_for_the_disk_on_a_worker_thread(
    tmp_path: Path,
) -> None:
    with open_db(tmp_path / "d.db", "FULL") as db:
        assert await db.transact(_thread_of_put, write=True) != threading.get_ident()


@pytest.mark.anyio
async def test_a_writer_waiting_for_another_writer_never_blocks_the_event_loop(
    tmp_path: Path,
) -> None:
    """Another connection holds the write lock; only a task on this event loop releases it.
    Had the transaction waited for the lock on the loop's thread, the release could not run
    and the transaction would fail at the busy timeout instead of committing."""
    path = tmp_path / "d.db"
    with open_db(path, "NORMAL", busy_timeout=5.0) as db:
        loop_thread = threading.get_ident()
        waits_on_loop: list[str] = []
        timeout = ["5000"]  # the busy timeout in force, as the connection's statements set it

        def trace(statement: str) -> None:  # what SQLite runs on this connection, and where
            if statement.startswith("PRAGMA busy_timeout"):
                timeout[0] = statement.split("=")[1].strip()
            elif statement == "BEGIN IMMEDIATE" and threading.get_ident() == loop_thread:
                waits_on_loop.append(timeout[0])

        db._connection().set_trace_callback(trace)
        blocker = sqlite3.connect(path, isolation_level=None)
        blocker.execute("BEGIN IMMEDIATE")
        done: list[int] = []

        async def write(*, task_status: TaskStatus[None]) -> None:
            task_status.started()
            done.append(await db.transact(_thread_of_put, write=True))

        try:
            async with anyio.create_task_group() as tg:
                await tg.start(write)
                await anyio.wait_all_tasks_blocked()
                assert done == []  # still waiting for the lock, and this task runs meanwhile
                blocker.execute("ROLLBACK")
        finally:
            blocker.close()
        assert done
        assert done[0] != threading.get_ident()  # it waited on a worker thread
        assert waits_on_loop == ["0"]  # tried once on the loop's thread, without waiting
        assert await db.transact(_count, write=False) == 1
        # the connection's own busy timeout is back: a held lock is waited for, then refused
        assert db.run(lambda c: c.execute("PRAGMA busy_timeout").fetchone()[0], False) == 5000


@pytest.mark.anyio
async def test_an_inline_transaction_that_raises_writes_nothing(tmp_path: Path) -> None:
    with open_db(tmp_path / "d.db", "NORMAL") as db:

        def half(conn: sqlite3.Connection) -> None:
            _thread_of_put(conn)
            raise KeyError("judgement refused")

        with pytest.raises(KeyError):
            await db.transact(half, write=True)
        assert await db.transact(_count, write=False) == 0
        conn_put = lambda c: c.execute("INSERT INTO demo_rows VALUES ('a', 1)")  # noqa: E731
        await db.transact(conn_put, write=True)
        with pytest.raises(DemoError, match="transaction failed"):
            await db.transact(conn_put, write=True)  # primary key violation
        assert await db.transact(_count, write=False) == 1


@pytest.mark.anyio
async def test_inline_writes_in_a_row_set_no_busy_timeout_and_a_read_waits_again(
    tmp_path: Path,
) -> None:
    """A run checkpoints every step: from the second inline write on, a write is its BEGIN, its
    statements and its COMMIT — the busy timeout is switched only when what follows may wait."""
    with open_db(tmp_path / "d.db", "NORMAL", busy_timeout=5.0) as db:
        said: list[str] = []
        db._connection().set_trace_callback(said.append)
        for n in range(3):
            put = lambda c, n=n: c.execute("INSERT INTO demo_rows VALUES (?, 1)", (f"k{n}",))  # noqa: E731
            await db.transact(put, write=True)
        writes = said[said.index("BEGIN IMMEDIATE", 1) :]
        assert not [s for s in writes if s.startswith("PRAGMA")], said
        assert said[0] == "PRAGMA busy_timeout = 0"  # the first write: no waiting on the loop
        said.clear()
        assert await db.transact(_count, write=False) == 3
        assert said[0] == "PRAGMA busy_timeout = 5000"  # a read may wait: it waits as configured
        assert db._connection().execute("PRAGMA busy_timeout").fetchone()[0] == 5000
        said.clear()
        await db.transact(lambda c: c.execute("DELETE FROM demo_rows"), write=True)
        assert said[:2] == ["PRAGMA busy_timeout = 0", "BEGIN IMMEDIATE"]
        assert db.run(lambda c: c.execute("PRAGMA busy_timeout").fetchone()[0], False) == 5000
