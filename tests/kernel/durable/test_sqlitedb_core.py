"""sqlitedb's synchronous core: the one opening, pragmas, transactions and failure meanings that
the kernel's stores (`Database`) and the session store (`memory`) are both built on."""

from __future__ import annotations

import contextlib
import errno
import hashlib
import secrets
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from yagent.kernel.durable import sqlitedb
from yagent.kernel.durable.sqlitedb import Database
from yagent.memory import SessionStore, StoreBusyError, StoreFullError

SCHEMA = ("CREATE TABLE IF NOT EXISTS demo_rows (k TEXT PRIMARY KEY, v INTEGER NOT NULL)",)


class DemoError(Exception):
    pass


def _pragmas(conn: sqlite3.Connection) -> tuple[object, ...]:
    return tuple(
        conn.execute(f"PRAGMA {name}").fetchone()[0]
        for name in ("journal_mode", "foreign_keys", "synchronous", "busy_timeout")
    )


def _insert_then_fail(
    conn: sqlite3.Connection, around: contextlib.AbstractContextManager[None]
) -> None:
    with around:
        conn.execute("INSERT INTO rows VALUES (2)")
        raise DemoError("undo")


@pytest.fixture
def conn(tmp_path: Path) -> Iterator[sqlite3.Connection]:
    opened, _ = sqlitedb.connect(str(tmp_path / "c.db"), busy_timeout=0.05, synchronous="NORMAL")
    opened.execute("CREATE TABLE rows (v INTEGER)")
    yield opened
    opened.close()


def test_every_store_gets_the_same_pragmas_from_the_one_core(tmp_path: Path) -> None:
    raw, journal = sqlitedb.connect(str(tmp_path / "raw.db"), busy_timeout=2.5, synchronous="full")
    assert journal == "wal"
    assert _pragmas(raw) == ("wal", 1, 2, 2500)
    raw.close()
    with Database(
        tmp_path / "k.db",
        prefix="demo",
        version=1,
        schema=SCHEMA,
        error=DemoError,
        busy_timeout=2.5,
        synchronous="FULL",
    ) as db:
        assert db.run(_pragmas, False) == ("wal", 1, 2, 2500)  # foreign keys: on for the kernel's
    with (
        SessionStore(tmp_path / "s.db", busy_timeout=2.5, durable=True) as store,
        store._read() as (session_conn, _),
    ):
        assert _pragmas(session_conn) == ("wal", 1, 2, 2500)


def test_an_unknown_sync_mode_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="synchronous must be one of"):
        sqlitedb.connect(str(tmp_path / "x.db"), busy_timeout=1, synchronous="OFF")
    assert not (tmp_path / "x.db").exists()


def test_check_sees_the_file_before_any_pragma_could_change_it(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    other = sqlite3.connect(path)
    other.execute("CREATE TABLE theirs (x)")
    other.commit()
    other.close()
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    seen: list[str] = []

    def refuse(conn: sqlite3.Connection) -> None:
        seen.append(conn.execute("PRAGMA journal_mode").fetchone()[0])
        raise DemoError("not ours")

    with pytest.raises(DemoError, match="not ours"):
        sqlitedb.connect(str(path), busy_timeout=1, synchronous="NORMAL", check=refuse)
    assert seen == ["delete"]  # still the other program's journal mode
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before
    assert not (tmp_path / "other.db-wal").exists()


def test_a_transaction_commits_or_rolls_back_whole(conn: sqlite3.Connection) -> None:
    sqlitedb.begin(conn, write=True)
    with sqlitedb.committed(conn):
        conn.execute("INSERT INTO rows VALUES (1)")
    sqlitedb.begin(conn, write=True)
    with pytest.raises(DemoError):
        _insert_then_fail(conn, sqlitedb.committed(conn))
    assert not conn.in_transaction
    assert conn.execute("SELECT v FROM rows").fetchall() == [(1,)]


def test_a_savepoint_is_undone_alone_and_the_transaction_goes_on(
    conn: sqlite3.Connection,
) -> None:
    sqlitedb.begin(conn, write=True)
    with sqlitedb.committed(conn):
        conn.execute("INSERT INTO rows VALUES (1)")
        with pytest.raises(DemoError):
            _insert_then_fail(conn, sqlitedb.savepoint(conn, "call"))
        with sqlitedb.savepoint(conn, "call"):
            conn.execute("INSERT INTO rows VALUES (3)")
    assert conn.execute("SELECT v FROM rows ORDER BY v").fetchall() == [(1,), (3,)]


def test_a_write_waits_for_the_lock_then_fails_as_busy(
    tmp_path: Path, conn: sqlite3.Connection
) -> None:
    other = sqlite3.connect(tmp_path / "c.db", isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(sqlite3.OperationalError) as caught:
            sqlitedb.begin(conn, write=True)
        assert sqlitedb.failure(caught.value) == "busy"
        sqlitedb.begin(conn, write=False)  # a WAL reader is not blocked by the writer
        with sqlitedb.committed(conn):
            assert conn.execute("SELECT count(*) FROM rows").fetchone()[0] == 0
    finally:
        other.execute("ROLLBACK")
        other.close()


def test_failure_names_a_full_disk_and_a_damaged_file(
    tmp_path: Path, conn: sqlite3.Connection
) -> None:
    conn.execute(f"PRAGMA max_page_count = {conn.execute('PRAGMA page_count').fetchone()[0]}")
    sqlitedb.begin(conn, write=True)
    with pytest.raises(sqlite3.Error) as full, sqlitedb.committed(conn):
        conn.execute(
            "WITH RECURSIVE n(v) AS (SELECT 1 UNION ALL SELECT v + 1 FROM n WHERE v < 50000)"
            " INSERT INTO rows SELECT v FROM n"
        )
    assert sqlitedb.failure(full.value) == "full"
    assert conn.execute("SELECT count(*) FROM rows").fetchone()[0] == 0  # nothing half-written
    assert sqlitedb.failure(OSError(errno.ENOSPC, "No space left on device")) == "full"
    assert sqlitedb.failure(OSError(errno.EDQUOT, "Disk quota exceeded")) == "full"
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"not a database at all, " * 100)
    raw = sqlite3.connect(garbage)
    with pytest.raises(sqlite3.DatabaseError) as bad:
        raw.execute("SELECT * FROM sqlite_master").fetchall()
    raw.close()
    assert sqlitedb.failure(bad.value) == "damaged"
    assert sqlitedb.failure(sqlite3.OperationalError("no such table: x")) is None
    assert sqlitedb.failure(ValueError("x")) is None


def test_the_session_store_maps_the_cores_failures_to_its_own_errors(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    with SessionStore(path, busy_timeout=0.05) as store:
        sid = store.create_session(workspace="/w").id
        live = store._live()
        live.execute(f"PRAGMA max_page_count = {live.execute('PRAGMA page_count').fetchone()[0]}")
        with pytest.raises(StoreFullError, match="is full"), store.batch():
            store.append_event(sid, "big", {"text": secrets.token_hex(100_000)})
        assert store.events(sid) == []
        live.execute("PRAGMA max_page_count = 1000000")
        other = sqlite3.connect(path, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")
        try:
            with pytest.raises(StoreBusyError, match="busy beyond the busy timeout"):
                store.append_event(sid, "x", {})
        finally:
            other.execute("ROLLBACK")
            other.close()
        assert store.append_event(sid, "x", {}) == 1
