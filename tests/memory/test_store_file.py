"""The file: creation, permissions, reopening, schema versions and refusals, closing, busy."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import stat
from pathlib import Path

import pytest

from yagent.memory import (
    NewerSchemaError,
    SchemaError,
    SessionStore,
    SessionStoreError,
    StoreBusyError,
    StoreClosedError,
    latest_version,
)
from yagent.memory import base as base_module
from yagent.memory import schema as schema_module

from .conftest import FakeClock


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _fill(store: SessionStore) -> str:
    sid = store.create_session(workspace="/w", title="t", model="m", meta={"k": 1}).id
    store.append_message(sid, {"role": "user", "content": "hi"}, agent="a", delegation_id="d")
    store.append_event(sid, "e", {"x": [1, 2]})
    store.record_tool_call(sid, call_id="c", name="t", arguments="{}", started_at=1.0)
    store.record_tool_result(sid, "c", content="out", ok=True, kind=None, ended_at=2.0)
    store.record_tool_call(sid, call_id="open", name="t", arguments="{}", started_at=3.0)
    store.add_usage(sid, model="m", input_tokens=1, output_tokens=2, cost=0.5)
    store.write_checkpoint(sid, step=4, data={"s": 4})
    store.archive(sid, kind="compaction", payload={"m": []})
    store.set_status(sid, "paused")
    return sid


def test_creates_parent_directories_private_file_and_wal(tmp_path: Path):
    path = tmp_path / "a" / "b" / "sessions.db"
    with SessionStore(path) as store:
        assert store.path == path
        assert store.journal_mode == "wal"
        assert path.exists()
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
        with store._read() as (conn, _):
            assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
            assert conn.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
    with SessionStore(path, durable=True) as durable, durable._read() as (conn, _):
        assert conn.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL


def test_reopen_after_close_keeps_everything(db_path: Path, clock: FakeClock):
    with SessionStore(db_path, clock=clock) as store:
        sid = _fill(store)
        before = store.export_session(sid)
    with SessionStore(db_path, clock=clock) as again:
        assert again.export_session(sid) == before
        assert again.get_session(sid[:20]).status == "paused"
        assert again.append_message(sid, {"role": "user"}) == 2
        assert again.tool_calls(sid)[1].ended_at is None


def test_opening_twice_is_idempotent(db_path: Path):
    SessionStore(db_path).close()
    SessionStore(db_path).close()
    conn = sqlite3.connect(db_path)
    try:
        assert conn.execute("SELECT version FROM schema_version").fetchall() == [
            (latest_version(),)
        ]
    finally:
        conn.close()


def test_newer_schema_is_refused_and_the_file_is_not_modified(db_path: Path):
    with SessionStore(db_path) as store:
        sid = _fill(store)
    conn = sqlite3.connect(db_path)
    conn.execute("PRAGMA journal_mode=DELETE")  # as an older SQLite tool might leave it
    conn.execute("UPDATE schema_version SET version = ?", (latest_version() + 1,))
    conn.commit()
    conn.close()
    digest, mtime = _digest(db_path), db_path.stat().st_mtime_ns

    with pytest.raises(NewerSchemaError) as refused:
        SessionStore(db_path)
    assert refused.value.found == latest_version() + 1
    assert refused.value.supported == latest_version()
    assert "upgrade yagent" in str(refused.value)
    assert isinstance(refused.value, SchemaError)
    assert _digest(db_path) == digest
    assert db_path.stat().st_mtime_ns == mtime
    assert not Path(f"{db_path}-wal").exists()
    conn = sqlite3.connect(db_path)
    try:
        assert conn.execute("SELECT id FROM sessions").fetchall() == [(sid,)]
    finally:
        conn.close()


def test_another_programs_database_is_refused_untouched(db_path: Path):
    db_path.parent.mkdir(parents=True)
    conn = sqlite3.connect(db_path)
    conn.execute("CREATE TABLE notes (body TEXT)")
    conn.commit()
    conn.close()
    digest = _digest(db_path)
    with pytest.raises(SchemaError, match="another program"):
        SessionStore(db_path)
    assert _digest(db_path) == digest


def test_a_file_that_is_not_sqlite_is_refused_untouched(db_path: Path):
    db_path.parent.mkdir(parents=True)
    db_path.write_bytes(b"this is not a database at all" * 100)
    digest = _digest(db_path)
    with pytest.raises(SchemaError, match="not a readable SQLite database"):
        SessionStore(db_path)
    assert _digest(db_path) == digest


def test_a_damaged_version_table_is_refused(db_path: Path):
    db_path.parent.mkdir(parents=True)
    conn = sqlite3.connect(db_path)
    conn.execute("CREATE TABLE schema_version (id INTEGER PRIMARY KEY, version INTEGER)")
    conn.commit()
    conn.close()
    with pytest.raises(SchemaError, match="damaged schema_version"):
        SessionStore(db_path)


def test_migrations_apply_once_in_order(db_path: Path, monkeypatch: pytest.MonkeyPatch):
    with SessionStore(db_path) as store:
        sid = store.create_session(workspace="/w").id
    extra = (
        latest_version() + 1,
        ("ALTER TABLE sessions ADD COLUMN tags TEXT NOT NULL DEFAULT ''",),
    )
    monkeypatch.setattr(schema_module, "MIGRATIONS", (*schema_module.MIGRATIONS, extra))
    with SessionStore(db_path) as upgraded:  # would fail on a second ALTER if re-applied
        assert upgraded.get_session(sid).id == sid
    with SessionStore(db_path) as again, again._read() as (conn, _):
        assert conn.execute("SELECT version FROM schema_version").fetchone()[0] == extra[0]
        assert conn.execute("SELECT tags FROM sessions").fetchone()[0] == ""
    monkeypatch.undo()
    with pytest.raises(NewerSchemaError):
        SessionStore(db_path)


def test_a_failing_migration_leaves_the_old_version(db_path: Path, monkeypatch: pytest.MonkeyPatch):
    SessionStore(db_path).close()
    current = latest_version()
    broken = (current + 1, ("CREATE TABLE fine (x)", "THIS IS NOT SQL"))
    monkeypatch.setattr(schema_module, "MIGRATIONS", (*schema_module.MIGRATIONS, broken))
    with pytest.raises(SessionStoreError):
        SessionStore(db_path)
    conn = sqlite3.connect(db_path)
    try:
        assert conn.execute("SELECT version FROM schema_version").fetchone()[0] == current
        names = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
        assert "fine" not in names
    finally:
        conn.close()


def test_unopenable_path_is_a_store_error(tmp_path: Path):
    directory = tmp_path / "adir"
    directory.mkdir()
    with pytest.raises(SessionStoreError, match="cannot open"):
        SessionStore(directory)


def test_busy_timeout_is_validated(db_path: Path):
    with pytest.raises(TypeError):
        SessionStore(db_path, busy_timeout=True)
    with pytest.raises(ValueError, match="busy_timeout"):
        SessionStore(db_path, busy_timeout=-1)


def test_close_is_idempotent_and_later_calls_refuse(db_path: Path):
    store = SessionStore(db_path)
    sid = store.create_session(workspace="/w").id
    store.close()
    store.close()
    with pytest.raises(StoreClosedError, match="closed"):
        store.append_event(sid, "x", {})
    with pytest.raises(StoreClosedError):
        store.list_sessions()


def test_context_manager_closes(db_path: Path):
    with SessionStore(db_path) as store:
        pass
    with pytest.raises(StoreClosedError):
        store.list_sessions()


def test_a_store_used_from_another_process_refuses_and_is_not_closed_there(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
):
    store = SessionStore(db_path)
    conn = store._conn
    assert conn is not None
    parent = os.getpid()
    monkeypatch.setattr(base_module.os, "getpid", lambda: parent + 1)
    with pytest.raises(StoreClosedError, match="forked process"):
        store.list_sessions()
    store.close()  # in the "child": closing would release the parent's file locks
    monkeypatch.undo()
    assert conn.execute("SELECT COUNT(*) FROM sessions").fetchone() == (0,)
    conn.close()
    with pytest.raises(StoreClosedError):
        store.list_sessions()


def test_a_writer_holding_the_lock_beyond_the_timeout_is_reported_busy(db_path: Path):
    with SessionStore(db_path, busy_timeout=0.05) as store:
        sid = store.create_session(workspace="/w").id
        other = sqlite3.connect(db_path, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")
        try:
            with pytest.raises(StoreBusyError, match="busy"):
                store.append_event(sid, "x", {})
        finally:
            other.execute("ROLLBACK")
            other.close()
        assert store.append_event(sid, "x", {}) == 1


def test_opening_while_another_writer_holds_the_lock_is_a_store_error(db_path: Path):
    db_path.parent.mkdir(parents=True)
    other = sqlite3.connect(db_path, isolation_level=None)
    other.execute("PRAGMA journal_mode=WAL")  # an initialised file (an empty one is refused)
    other.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(SessionStoreError, match="cannot open"):
            SessionStore(db_path, busy_timeout=0.05)
    finally:
        other.execute("ROLLBACK")
        other.close()


def test_a_damaged_store_reports_store_errors(db_path: Path):
    with SessionStore(db_path) as store:
        sid = store.create_session(workspace="/w").id
        store.append_event(sid, "x", {})
        raw = sqlite3.connect(db_path, isolation_level=None)
        raw.execute("UPDATE events SET payload = '[1, 2]'")
        raw.execute("UPDATE sessions SET meta = 'not json'")
        raw.execute("DROP TABLE archive")
        raw.close()
        with pytest.raises(SchemaError, match="not an object"):
            store.events(sid)
        with pytest.raises(SchemaError, match="not valid JSON"):
            store.get_session(sid)
        with pytest.raises(SessionStoreError, match="no such table"):
            store.archive(sid, kind="k", payload={})
