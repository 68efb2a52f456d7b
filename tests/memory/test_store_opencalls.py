"""A result goes to its call's row by key when the store knows the session's open calls
(`memory.opencalls`) — and to exactly the call the matching rule picks: the earliest open call of
its id and delegation, else the latest. Every way the memory could go stale is tried here: calls
from before the store was opened, another connection writing between two transactions, a
transaction undone, a result for any delegation."""

from __future__ import annotations

from pathlib import Path

import pytest

from yagent.memory import PendingResult, SessionStore, ToolCallNotFoundError


def _call(store: SessionStore, sid: str, call_id: str, delegation: str = "") -> int:
    return store.record_tool_call(
        sid, call_id=call_id, name="t", arguments="{}", delegation_id=delegation, started_at=1.0
    )


def _result(store: SessionStore, sid: str, call_id: str, content: str, **kw: str | None) -> int:
    return store.record_tool_result(
        sid, call_id, content=content, ok=True, kind=None, ended_at=2.0, **kw
    )


def _contents(store: SessionStore, sid: str) -> list[str | None]:
    return [call.content for call in store.tool_calls(sid)]


def test_a_step_matches_its_result_by_the_calls_key_not_by_the_rules_query(
    store: SessionStore, sid: str
):
    _call(store, sid, "c0")
    _result(store, sid, "c0", "r0", delegation_id="")
    seen: list[str] = []
    store._live().set_trace_callback(seen.append)
    _call(store, sid, "c1")
    assert _result(store, sid, "c1", "r1", delegation_id="") == 2
    store._live().set_trace_callback(None)
    updates = [sql for sql in seen if sql.startswith("UPDATE tool_calls")]
    # the rule's query (a list subquery, a sort, RETURNING) is the dearest statement of a step
    assert len(updates) == 1, updates
    assert "ORDER BY" not in updates[0]
    assert "RETURNING" not in updates[0]
    assert _contents(store, sid) == ["r0", "r1"]


def test_an_open_call_from_before_the_store_was_opened_is_answered_first(
    db_path: Path, store: SessionStore, sid: str
):
    _call(store, sid, "x")  # left open, as by a run that died
    with SessionStore(db_path) as resumed:
        assert _call(resumed, sid, "x") == 2
        assert _result(resumed, sid, "x", "first", delegation_id="") == 1
        assert _result(resumed, sid, "x", "second", delegation_id="") == 2
    assert _contents(store, sid) == ["first", "second"]


def test_another_connection_writing_between_two_transactions_is_read_again(
    db_path: Path, store: SessionStore, sid: str
):
    _call(store, sid, "x")
    with SessionStore(db_path) as other:
        _result(other, sid, "x", "answered elsewhere", delegation_id="")
        assert _call(other, sid, "x") == 2
    # the rule now picks call 2; this store remembered call 1 as open
    assert _result(store, sid, "x", "mine", delegation_id="") == 2
    assert _contents(store, sid) == ["answered elsewhere", "mine"]


def test_a_result_taken_by_a_transaction_that_rolled_back_is_open_again(
    store: SessionStore, sid: str
):
    _call(store, sid, "x")
    _call(store, sid, "x")
    doomed = [
        PendingResult(
            call_id="x", content="lost", ok=True, kind=None, ended_at=2.0, delegation_id=""
        ),
        PendingResult(
            call_id="none", content="", ok=True, kind=None, ended_at=2.0, delegation_id=""
        ),
    ]
    with pytest.raises(ToolCallNotFoundError):
        store.write_records(sid, doomed)
    assert _contents(store, sid) == [None, None]
    assert _result(store, sid, "x", "kept", delegation_id="") == 1
    assert _contents(store, sid) == ["kept", None]


def test_a_result_for_any_delegation_closes_the_call_the_rule_picked(store: SessionStore, sid: str):
    _call(store, sid, "x", delegation="p")
    _call(store, sid, "x", delegation="p")
    assert _result(store, sid, "x", "any") == 1  # delegation None: the rule, in SQL
    assert _result(store, sid, "x", "in p", delegation_id="p") == 2
    # no open call left in p: the latest is overwritten, as the rule says
    assert _result(store, sid, "x", "again", delegation_id="p") == 2
    assert _contents(store, sid) == ["any", "again"]
