"""`write_records`: several records of a session in one transaction, in order, one statement
each; a pending message referenced only once it is stored, never after its transaction failed."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from yagent.memory import (
    PendingCall,
    PendingEvent,
    PendingMessage,
    PendingResult,
    PendingUsage,
    SessionNotFoundError,
    SessionStore,
    ToolCallNotFoundError,
)
from yagent.memory.log import CONTENT_REF
from yagent.memory.pending import PendingArchive, PendingCheckpoint

OUTPUT = "line one\nline two\n" * 40


def _raw(path: Path, query: str) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute(query).fetchall()
    finally:
        conn.close()


def _statements(store: SessionStore) -> list[str]:
    seen: list[str] = []
    store._live().set_trace_callback(seen.append)
    return seen


def _tool_step(call_id: str, content: str = OUTPUT) -> tuple[list, list]:  # type: ignore[type-arg]
    """A step's records as `app.steplog` hands them over: write-ahead, then the step's end."""
    message = PendingMessage({"role": "tool", "tool_call_id": call_id, "content": OUTPUT}, "a")
    ahead = [
        PendingEvent("model_request", {"step": 1}),
        PendingUsage(model="m", input_tokens=3, output_tokens=2, cost=None),
        PendingMessage({"role": "assistant", "content": "", "tool_calls": [call_id]}, "a"),
        PendingEvent("tool_call", {"call_id": call_id}),
        PendingCall(call_id=call_id, name="read_file", arguments="{}", started_at=1.0),
    ]
    end = [
        message,
        PendingEvent("tool_result", {"call_id": call_id, "content": content}, "", message),
        PendingResult(
            call_id=call_id,
            content=content,
            ok=True,
            kind=None,
            ended_at=2.0,
            delegation_id="",
            content_message=message,
        ),
        PendingEvent("sub_agent_activity", {"calls": 1}),
    ]
    return ahead, end


def test_records_are_stored_in_order_with_their_seqs(store: SessionStore, sid: str):
    ahead, end = _tool_step("c1")
    assert store.write_records(sid, ahead) == [1, 1, 1, 2, 1]
    assert store.write_records(sid, end) == [2, 3, 1, 4]
    assert [e.type for e in store.events(sid)] == [
        "model_request",
        "tool_call",
        "tool_result",
        "sub_agent_activity",
    ]
    assert [m["role"] for m in store.messages(sid)] == ["assistant", "tool"]
    (call,) = store.tool_calls(sid)
    assert (call.call_id, call.ok, call.content, call.ended_at) == ("c1", True, OUTPUT, 2.0)
    assert store.usage(sid).input_tokens == 3
    assert store.write_records(sid, []) == []


def test_a_tool_step_is_one_statement_per_record(store: SessionStore, sid: str):
    store.write_records(sid, _tool_step("c0")[0])
    seen = _statements(store)
    ahead, end = _tool_step("c1")
    store.write_records(sid, ahead)
    store.write_records(sid, end)
    # per transaction: BEGIN, the seq check, the session's time, COMMIT; then one per record
    assert len(seen) == 2 * 4 + len(ahead) + len(end), seen
    assert [sql for sql in seen if "MAX(seq)" in sql or "SAVEPOINT" in sql] == []


def test_a_result_is_kept_by_reference_to_its_pending_message(
    store: SessionStore, sid: str, db_path: Path
):
    ahead, end = _tool_step("c1")
    store.write_records(sid, ahead)
    store.write_records(sid, end)
    message = end[0]
    assert message.seq == 2
    assert _raw(db_path, "SELECT content, content_message FROM tool_calls") == [(None, 2)]
    payloads = _raw(db_path, "SELECT payload FROM events WHERE type = 'tool_result'")
    assert OUTPUT[:20] not in str(payloads)
    assert store.events(sid, types="tool_result")[0].payload["content"] == OUTPUT
    assert store.tool_calls(sid)[0].content == OUTPUT


def test_a_result_that_differs_from_its_message_keeps_its_copy(store: SessionStore, sid: str):
    masked = OUTPUT.replace("one", "[masked]")
    ahead, end = _tool_step("c1", content=masked)
    store.write_records(sid, ahead)
    store.write_records(sid, end)
    (event,) = store.events(sid, types="tool_result")
    assert event.payload == {"call_id": "c1", "content": masked}
    assert store.tool_calls(sid)[0].content == masked


def test_a_message_whose_transaction_failed_is_never_referenced(
    store: SessionStore, sid: str, db_path: Path
):
    message = PendingMessage({"role": "tool", "tool_call_id": "c9", "content": OUTPUT})
    failed = [
        message,
        PendingResult(call_id="c9", content=OUTPUT, ok=True, kind=None, ended_at=1.0),
    ]
    with pytest.raises(ToolCallNotFoundError):  # no call c9 on record: nothing of it is stored
        store.write_records(sid, failed)
    assert message.seq is None
    assert store.messages(sid) == []
    store.write_records(sid, [PendingEvent("tool_result", {"content": OUTPUT}, "", message)])
    assert CONTENT_REF not in str(_raw(db_path, "SELECT payload FROM events"))
    assert store.events(sid)[0].payload == {"content": OUTPUT}


def test_a_message_of_a_batch_rolled_back_is_never_referenced(store: SessionStore, sid: str):
    message = PendingMessage({"role": "tool", "content": OUTPUT})

    def step() -> None:
        with store.batch(whole=True):
            store.write_records(sid, [message])
            assert message.seq == 1  # given out inside the batch
            store.append_event("0" * 26, "lost", {})  # no such session: the batch fails

    with pytest.raises(SessionNotFoundError):
        step()
    assert message.seq is None
    store.write_records(sid, [PendingEvent("tool_result", {"content": OUTPUT}, "", message)])
    assert store.events(sid)[0].payload == {"content": OUTPUT}
    assert store.messages(sid) == []


def test_a_refused_record_writes_nothing_of_its_list(store: SessionStore, sid: str):
    seen = _statements(store)
    records = [
        PendingEvent("fine", {"a": 1}),
        PendingEvent("bad", {"a": {1, 2}}),
    ]
    with pytest.raises(TypeError, match=r"event payload\['a'\] is a set"):
        store.write_records(sid, records)
    with pytest.raises(ValueError, match=CONTENT_REF):
        store.write_records(sid, [PendingEvent("x", {CONTENT_REF: 1})])
    with pytest.raises(TypeError, match="ok must be a bool"):
        store.write_records(
            sid,
            [PendingResult(call_id="c", content="", ok=1, kind=None, ended_at=1.0)],  # type: ignore[arg-type]
        )
    with pytest.raises(TypeError, match="not a record the store writes"):
        store.write_records(sid, ["event"])  # type: ignore[list-item]
    assert seen == []  # refused before any transaction began
    assert store.events(sid) == []


def test_one_clock_reading_per_transaction_in_commit_order(store: SessionStore, sid: str, clock):  # type: ignore[no-untyped-def]
    store.write_records(sid, [PendingEvent("a", {}), PendingEvent("b", {})])
    clock.advance(1.5)
    store.write_records(sid, [PendingEvent("c", {})])
    assert [e.ts for e in store.events(sid)] == [clock.value - 1.5, clock.value - 1.5, clock.value]
    assert store.get_session(sid).updated_at == clock.value


def test_a_checkpoint_and_an_archive_record_go_the_same_way(store: SessionStore, sid: str):
    seen = _statements(store)
    seqs = store.write_records(
        sid,
        [
            PendingEvent("step", {"n": 1}),
            PendingCheckpoint(step=1, data={"at": "one"}),
            PendingArchive(kind="messages", payload={"dropped": 2}),
            PendingCheckpoint(step=2, data={"at": "two"}, delegation_id="d"),
        ],
    )
    assert seqs == [1, 1, 1, 2]
    # one transaction: BEGIN, the session's time, the seq check, a statement a table, COMMIT
    assert len([sql for sql in seen if sql.startswith("INSERT INTO checkpoints")]) == 2
    assert sum(sql == "BEGIN IMMEDIATE" for sql in seen) == 1
    latest = store.latest_checkpoint(sid)
    assert latest is not None
    assert (latest.step, latest.data) == (1, {"at": "one"})
    assert [a.payload for a in store.archived(sid)] == [{"dropped": 2}]
    with pytest.raises(ValueError, match="step must be >= 0"):
        store.write_records(sid, [PendingEvent("x", {}), PendingCheckpoint(step=-1, data={})])
    with pytest.raises(TypeError, match=r"archive payload\['a'\] is a set"):
        store.write_records(sid, [PendingArchive(kind="k", payload={"a": {1}})])
    assert [e.type for e in store.events(sid)] == ["step"]
