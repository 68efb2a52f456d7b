"""sqlitedb: WAL, busy timeout, schema prefix and version, one transaction per operation."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import anyio
import pytest

from yagent.kernel.durable.sqlitedb import Database, DatabaseStore

SCHEMA = ("CREATE TABLE IF NOT EXISTS demo_rows (k TEXT PRIMARY KEY, v INTEGER NOT NULL)",)


class DemoError(Exception):
    pass


def open_db(path: Path | str, **kwargs: Any) -> Database:
    return Database(path, prefix="demo", version=1, schema=SCHEMA, error=DemoError, **kwargs)


def _put(conn: sqlite3.Connection) -> int:
    conn.execute("INSERT INTO demo_rows VALUES ('a', 1)")
    return 1


def test_opens_in_wal_with_the_chosen_sync_level_and_records_the_version(tmp_path: Path) -> None:
    path = tmp_path / "d.db"
    with open_db(path, synchronous="normal") as db:
        assert db.run(lambda c: c.execute("PRAGMA synchronous").fetchone()[0], False) == 1
    raw = sqlite3.connect(path)
    assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert raw.execute("SELECT version FROM demo_schema").fetchall() == [(1,)]
    raw.close()
    open_db(path).close()  # idempotent creation
    raw = sqlite3.connect(path)
    assert raw.execute("SELECT count(*) FROM demo_schema").fetchone()[0] == 1
    raw.close()


def test_an_unknown_schema_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "d.db"
    open_db(path).close()
    with pytest.raises(DemoError, match="schema version 1, this code knows 2"):
        Database(path, prefix="demo", version=2, schema=SCHEMA, error=DemoError)


@pytest.mark.anyio
async def test_an_operation_that_raises_writes_nothing(tmp_path: Path) -> None:
    with open_db(tmp_path / "d.db") as db:

        def half(conn: sqlite3.Connection) -> None:
            _put(conn)
            raise KeyError("judgement refused")

        with pytest.raises(KeyError):
            await db.transact(half, write=True)
        assert (
            await db.transact(
                lambda c: c.execute("SELECT count(*) FROM demo_rows").fetchone()[0], write=False
            )
            == 0
        )
        assert await db.transact(_put, write=True) == 1
        with pytest.raises(DemoError, match="transaction failed"):
            await db.transact(_put, write=True)  # primary key violation
        assert (
            await db.transact(
                lambda c: c.execute("SELECT count(*) FROM demo_rows").fetchone()[0], write=False
            )
            == 1
        )


@pytest.mark.anyio
async def test_a_write_lock_held_past_the_busy_timeout_is_the_stores_error(tmp_path: Path) -> None:
    path = tmp_path / "d.db"
    with open_db(path, busy_timeout=0.05) as db:
        blocker = sqlite3.connect(path, isolation_level=None)
        blocker.execute("BEGIN IMMEDIATE")
        with pytest.raises(DemoError, match="cannot begin"):
            await db.transact(_put, write=True)
        assert await db.transact(lambda c: 0, write=False) == 0  # readers are not blocked
        blocker.execute("ROLLBACK")
        blocker.close()
        assert await db.transact(_put, write=True) == 1


def test_a_closed_database_refuses_and_close_is_idempotent(tmp_path: Path) -> None:
    db = open_db(tmp_path / "d.db")
    db.close()
    db.close()
    with pytest.raises(DemoError, match="closed"):
        anyio.run(lambda: db.transact(_put, write=True))


def test_memory_databases_work_in_one_process() -> None:
    with open_db(":memory:") as db:
        assert db.run(_put, True) == 1


def test_unopenable_paths_are_the_stores_error(tmp_path: Path) -> None:
    with pytest.raises(DemoError, match="cannot open"):
        open_db(tmp_path / "missing" / "d.db")


def test_a_file_that_cannot_run_wal_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    class NoWal(sqlite3.Connection):
        def execute(self, sql: str, *args: Any) -> sqlite3.Cursor:
            if sql.startswith("PRAGMA journal_mode"):
                return super().execute("SELECT 'delete'")
            return super().execute(sql, *args)

    real = sqlite3.connect
    monkeypatch.setattr(sqlite3, "connect", lambda *a, **k: real(*a, **k, factory=NoWal))
    with pytest.raises(DemoError, match="cannot run in WAL mode"):
        open_db(tmp_path / "d.db")


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"synchronous": "OFF"}, "synchronous"),
        ({"busy_timeout": -1}, "busy_timeout"),
        ({"busy_timeout": float("nan")}, "busy_timeout"),
        ({"busy_timeout": True}, "busy_timeout"),
        ({"prefix": "Bad-Prefix"}, "prefix"),
        ({"schema": ("CREATE TABLE other (x)",)}, "IF NOT EXISTS"),
        ({"schema": ("CREATE TABLE IF NOT EXISTS other (x)",)}, "not prefixed demo_"),
        (
            {"schema": ("CREATE UNIQUE INDEX IF NOT EXISTS other_i ON demo_rows (v)",)},
            "not prefixed",
        ),
    ],
)
def test_unsafe_or_malformed_settings_are_refused(
    tmp_path: Path, kwargs: dict[str, Any], match: str
) -> None:
    args: dict[str, Any] = {"prefix": "demo", "version": 1, "schema": SCHEMA, "error": DemoError}
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        Database(tmp_path / "d.db", **args)


def test_a_database_store_exposes_its_path_and_closes_on_exit(tmp_path: Path) -> None:
    class Store(DatabaseStore):
        def __init__(self, path: Path) -> None:
            self._db = open_db(path)

    with Store(tmp_path / "s.db") as store:
        assert store.path == str(tmp_path / "s.db")
        assert store._db.run(_put, True) == 1
    with pytest.raises(DemoError, match="closed"):
        store._db.run(_put, True)
