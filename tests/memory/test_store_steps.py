"""A step's records in one transaction, a tool result stored once, and files of schema 1."""

from __future__ import annotations

import contextlib
import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from yagent.memory import (
    BatchFailedError,
    SessionNotFoundError,
    SessionStore,
    ToolCallNotFoundError,
    latest_version,
)
from yagent.memory.log import CONTENT_REF

SCHEMA_1 = Path(__file__).parent / "data" / "sessions_schema1.db"  # written by schema-1 code
OUTPUT = "line one\nline two\n" * 50


def _raw(path: Path, query: str) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute(query).fetchall()
    finally:
        conn.close()


def _begins(store: SessionStore) -> list[str]:
    seen: list[str] = []
    store._live().set_trace_callback(
        lambda sql: seen.append(sql) if sql.startswith("BEGIN") else None
    )
    return seen


def _tool_step(store: SessionStore, sid: str, content: str = OUTPUT) -> None:
    store.record_tool_call(sid, call_id="c1", name="read_file", arguments="{}", started_at=1.0)
    seq = store.append_message(
        sid, {"role": "tool", "tool_call_id": "c1", "name": "read_file", "content": OUTPUT}
    )
    payload = {"call_id": "c1", "name": "read_file", "ok": True, "content": content}
    store.append_event(sid, "tool_result", payload, content_message=seq)
    store.record_tool_result(
        sid, "c1", content=content, ok=True, kind=None, ended_at=2.0, content_message=seq
    )


def test_a_batch_is_one_transaction_for_every_call_in_it(store: SessionStore, db_path: Path):
    sid = store.create_session(workspace="/w").id
    begins = _begins(store)
    with store.batch():
        store.append_message(sid, {"role": "user", "content": "x"})
        store.append_event(sid, "a", {})
        store.add_usage(sid, model="m", input_tokens=1, output_tokens=1, cost=None)
        with store.batch():  # nested: joins the outer one
            store.append_event(sid, "b", {})
    assert begins == ["BEGIN IMMEDIATE"]
    assert [e.type for e in store.events(sid)] == ["a", "b"]


def test_a_failing_call_in_a_batch_is_undone_alone(store: SessionStore):
    sid = store.create_session(workspace="/w").id
    with store.batch():
        store.append_event(sid, "kept", {})
        with pytest.raises(ToolCallNotFoundError):
            store.record_tool_result(sid, "nope", content="", ok=True, kind=None, ended_at=1.0)
        with pytest.raises(SessionNotFoundError):
            store.append_event("0" * 26, "lost", {})
        store.append_event(sid, "also kept", {})
    assert [e.type for e in store.events(sid)] == ["kept", "also kept"]


def test_an_exception_leaving_a_batch_rolls_all_of_it_back(store: SessionStore):
    sid = store.create_session(workspace="/w").id

    def failing_step() -> None:
        with store.batch():
            store.append_event(sid, "gone", {})
            store.append_message(sid, {"role": "user", "content": "gone"})
            raise RuntimeError("the step failed")

    with pytest.raises(RuntimeError):
        failing_step()
    assert store.events(sid) == []
    assert store.messages(sid) == []
    store.append_event(sid, "after", {})  # the store is usable again
    assert [e.type for e in store.events(sid)] == ["after"]


def test_a_tool_result_is_stored_once_and_read_back_whole(store: SessionStore, db_path: Path):
    sid = store.create_session(workspace="/w").id
    _tool_step(store, sid)
    # on disk: the text once (the message); the event and the call row refer to it
    stored = _raw(db_path, "SELECT payload FROM events")
    assert len(stored) == 1
    assert OUTPUT not in str(stored[0][0])
    assert json.loads(str(stored[0][0]))[CONTENT_REF] == 1
    assert _raw(db_path, "SELECT content, content_message FROM tool_calls") == [(None, 1)]
    assert store.messages(sid)[0]["content"] == OUTPUT  # the one copy
    # read back: the same records as a copy would give
    (event,) = store.events(sid)
    assert event.payload == {"call_id": "c1", "name": "read_file", "ok": True, "content": OUTPUT}
    (call,) = store.tool_calls(sid)
    assert call.content == OUTPUT
    assert call.ok is True
    exported = store.export_session(sid)
    assert exported["events"][0]["payload"]["content"] == OUTPUT
    assert exported["tool_calls"][0]["content"] == OUTPUT


def test_a_result_that_differs_from_its_message_keeps_its_own_copy(
    store: SessionStore, db_path: Path
):
    sid = store.create_session(workspace="/w").id
    masked = OUTPUT.replace("one", "[masked]")  # what pii left of the text for the log
    _tool_step(store, sid, content=masked)
    assert _raw(db_path, "SELECT content, content_message FROM tool_calls") == [(masked, None)]
    (event,) = store.events(sid)
    assert event.payload["content"] == masked
    assert CONTENT_REF not in event.payload
    assert store.tool_calls(sid)[0].content == masked


def _statements(store: SessionStore) -> list[str]:
    seen: list[str] = []
    store._live().set_trace_callback(seen.append)
    return seen


def test_a_batch_marks_its_session_written_once(store: SessionStore):
    sid = store.create_session(workspace="/w").id
    before = store.get_session(sid).updated_at
    seen = _statements(store)
    with store.batch():
        _tool_step(store, sid)
        store.append_event(sid, "after", {})
    touches = [sql for sql in seen if sql.startswith("UPDATE sessions SET updated_at")]
    assert len(touches) == 1
    assert store.get_session(sid).updated_at >= before
    with store.batch():  # a missing session is still refused inside a batch, every time
        with pytest.raises(SessionNotFoundError):
            store.append_event("0" * 26, "lost", {})
        with pytest.raises(SessionNotFoundError):
            store.append_event("0" * 26, "lost again", {})


def test_a_touch_undone_with_its_call_is_made_again(store: SessionStore):
    sid = store.create_session(workspace="/w").id
    seen = _statements(store)
    with store.batch():
        with pytest.raises(ToolCallNotFoundError):  # touches, then fails: undone alone
            store.record_tool_result(sid, "nope", content="", ok=True, kind=None, ended_at=1.0)
        store.append_event(sid, "kept", {})
    touches = [sql for sql in seen if sql.startswith("UPDATE sessions SET updated_at")]
    assert len(touches) == 2


def test_a_result_stored_by_reference_in_its_batch_reads_no_message_back(store: SessionStore):
    sid = store.create_session(workspace="/w").id
    seen = _statements(store)
    with store.batch():
        _tool_step(store, sid)
    assert [sql for sql in seen if sql.startswith("SELECT body")] == []
    (event,) = store.events(sid)
    assert event.payload["content"] == OUTPUT
    assert store.tool_calls(sid)[0].content == OUTPUT


def test_a_message_rolled_back_is_never_referenced(store: SessionStore, db_path: Path):
    sid = store.create_session(workspace="/w").id

    def undone() -> None:  # the message is written, then its savepoint undone
        with store._transaction(write=True):
            store.append_message(sid, {"role": "tool", "content": OUTPUT})
            raise ValueError("undone")

    with store.batch():
        with pytest.raises(ValueError, match="undone"):
            undone()
        store.append_event(sid, "tool_result", {"content": OUTPUT}, content_message=1)
    assert store.messages(sid) == []
    (event,) = store.events(sid)
    assert event.payload["content"] == OUTPUT  # its own copy: message 1 does not exist


def test_a_batch_reads_each_tables_next_seq_once(store: SessionStore):
    sid = store.create_session(workspace="/w").id
    store.append_event(sid, "before", {})
    seen = _statements(store)
    with store.batch():
        for n in range(3):
            store.append_event(sid, f"e{n}", {})
            store.append_message(sid, {"role": "user", "content": f"m{n}"})
        with pytest.raises(SessionNotFoundError):  # undone alone: what the batch knew is re-read
            store.append_event("0" * 26, "lost", {})
        store.append_event(sid, "after", {})
    reads = [sql for sql in seen if sql.startswith("SELECT COALESCE(MAX(seq)")]
    # messages (never written before; events' last seq is remembered from "before"), then
    # events again after the undone call
    assert [sql.split()[6] for sql in reads] == ["messages", "events"]
    assert [e.seq for e in store.events(sid)] == [1, 2, 3, 4, 5]
    assert [e.type for e in store.events(sid)][-1] == "after"
    assert [m["seq"] for m in store.messages(sid)] == [1, 2, 3]


def test_a_whole_batch_takes_no_savepoint_per_call(store: SessionStore):
    sid = store.create_session(workspace="/w").id
    seen = _statements(store)
    with store.batch(whole=True):
        _tool_step(store, sid)
    assert [sql for sql in seen if "SAVEPOINT" in sql] == []
    assert store.tool_calls(sid)[0].content == OUTPUT


def test_a_failed_call_fails_its_whole_batch_even_when_caught(store: SessionStore):
    sid = store.create_session(workspace="/w").id

    def step() -> None:
        with store.batch(whole=True):
            store.append_event(sid, "gone", {})
            with contextlib.suppress(ToolCallNotFoundError):  # a half-done call: not committed
                store.record_tool_result(sid, "nope", content="", ok=True, kind=None, ended_at=1.0)
            store.append_event(sid, "gone too", {})

    with pytest.raises(BatchFailedError, match="nope") as raised:
        step()
    assert isinstance(raised.value.__cause__, ToolCallNotFoundError)
    assert store.events(sid) == []
    store.append_event(sid, "after", {})  # the store is usable again
    with store.batch(whole=True):
        store.append_event(sid, "then", {})
    assert [e.type for e in store.events(sid)] == ["after", "then"]


def test_a_payload_may_not_carry_the_reference_key(store: SessionStore):
    sid = store.create_session(workspace="/w").id
    with pytest.raises(ValueError, match=CONTENT_REF):
        store.append_event(sid, "x", {CONTENT_REF: 3})
    assert store.events(sid) == []


def test_a_file_written_by_schema_1_reads_the_same_and_takes_new_records(tmp_path: Path):
    path = tmp_path / "sessions.db"
    shutil.copyfile(SCHEMA_1, path)
    assert _raw(path, "SELECT version FROM schema_version") == [(1,)]
    with SessionStore(path) as store:
        (info,) = store.list_sessions()
        assert info.title == "made by schema 1"
        assert info.status == "finished"
        sid = info.id
        roles = [m["role"] for m in store.messages(sid)]
        assert roles == ["user", "assistant", "tool"]
        (call,) = store.tool_calls(sid)
        assert (call.call_id, call.content, call.ok) == ("c1", "line one\nline two\n", True)
        result = [e for e in store.events(sid) if e.type == "tool_result"]
        assert result[0].payload["content"] == "line one\nline two\n"
        assert store.usage(sid).input_tokens == 10
        assert store.latest_checkpoint(sid) is not None
        assert store.export_session(sid)["archive"][0]["payload"] == {"dropped": 1}
        store.append_message(sid, {"role": "user", "content": "go on"})
        _tool_step(store, sid)
        assert [c.content for c in store.tool_calls(sid)] == ["line one\nline two\n", OUTPUT]
    assert _raw(path, "SELECT version FROM schema_version") == [(latest_version(),)]


def test_a_long_record_is_stored_packed_and_reads_back_the_same(store: SessionStore, db_path: Path):
    sid = store.create_session(workspace="/w").id
    long_text = "".join(f"{n:04d}: the same kind of line again\n" for n in range(80))
    store.append_message(sid, {"role": "assistant", "content": long_text})
    store.append_message(sid, {"role": "user", "content": "short"})
    store.append_event(sid, "note", {"text": long_text})
    kinds = _raw(db_path, "SELECT typeof(body), length(body) FROM messages ORDER BY seq")
    assert kinds[0][0] == "blob"
    assert int(str(kinds[0][1])) * 3 < len(long_text)
    assert kinds[1][0] == "text"  # short records stay readable text
    assert _raw(db_path, "SELECT typeof(payload) FROM events") == [("blob",)]
    assert [m["content"] for m in store.messages(sid)] == [long_text, "short"]
    assert store.events(sid)[0].payload == {"text": long_text}
    assert store.rollout_summary(sid).assistant_turns == 1
