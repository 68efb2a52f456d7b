"""Usage totals, checkpoints, the archive, step facts, unknown sessions and the export."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from yagent.memory import SUB_AGENT_ACTIVITY, SessionNotFoundError, SessionStore, latest_version

from .conftest import FakeClock


def test_usage_totals_never_count_unknown_cost_as_zero(store: SessionStore, sid: str):
    empty = store.usage(sid)
    assert (empty.calls, empty.cost, empty.cost_complete, empty.unpriced_calls) == (0, 0.0, True, 0)

    store.add_usage(sid, model="m1", input_tokens=100, output_tokens=10, cost=None)
    only_unknown = store.usage(sid)
    assert (only_unknown.cost, only_unknown.cost_complete, only_unknown.unpriced_calls) == (
        None,
        False,
        1,
    )

    store.add_usage(
        sid,
        model="m2",
        input_tokens=50,
        output_tokens=5,
        cache_read_tokens=40,
        cache_write_tokens=7,
        cost=0.25,
        delegation_id="d",
    )
    store.add_usage(sid, model="m2", input_tokens=1, output_tokens=1, cost=0)
    totals = store.usage(sid)
    assert totals.calls == 3
    assert (totals.input_tokens, totals.output_tokens) == (151, 16)
    assert (totals.cache_read_tokens, totals.cache_write_tokens) == (40, 7)
    assert totals.cost == pytest.approx(0.25)
    assert totals.cost_complete is False
    assert totals.unpriced_calls == 1

    priced = store.usage(sid, model="m2")
    assert (priced.calls, priced.cost_complete, priced.unpriced_calls) == (2, True, 0)
    delegated = store.usage(sid, delegation_id="d")
    assert (delegated.calls, delegated.input_tokens) == (1, 50)
    assert store.usage(sid, delegation_id="d", model="m1").calls == 0


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"input_tokens": -1}, ValueError),
        ({"output_tokens": 1.5}, TypeError),
        ({"cache_read_tokens": True}, TypeError),
        ({"cost": math.nan}, TypeError),
        ({"cost": "0.1"}, TypeError),
        ({"cost": -0.5}, ValueError),
        ({"model": None}, TypeError),
    ],
)
def test_add_usage_refuses_bad_numbers(
    store: SessionStore, sid: str, kwargs: dict[str, Any], error: type[Exception]
):
    arguments: dict[str, Any] = {"model": "m", "input_tokens": 1, "output_tokens": 1, "cost": 0.1}
    arguments.update(kwargs)
    with pytest.raises(error):
        store.add_usage(sid, **arguments)
    assert store.usage(sid).calls == 0


def test_checkpoint_latest_wins_per_delegation(store: SessionStore, sid: str):
    assert store.latest_checkpoint(sid) is None
    store.write_checkpoint(sid, step=3, data={"cursor": 3})
    store.write_checkpoint(sid, delegation_id="child", step=7, data={"cursor": "c7"})
    store.write_checkpoint(sid, step=2, data={"cursor": 2})  # written later: wins despite step
    store.write_checkpoint(sid, delegation_id="other", step=1, data={})

    top = store.latest_checkpoint(sid)
    assert top is not None
    assert (top.step, top.data, top.delegation_id, top.seq) == (2, {"cursor": 2}, "", 3)
    child = store.latest_checkpoint(sid, delegation_id="child")
    assert child is not None
    assert (child.step, child.data) == (7, {"cursor": "c7"})
    assert store.latest_checkpoint(sid, delegation_id="nobody") is None
    with pytest.raises(ValueError, match="step"):
        store.write_checkpoint(sid, step=-1, data={})
    with pytest.raises(TypeError, match="step"):
        store.write_checkpoint(sid, step="3", data={})  # type: ignore[arg-type]


def test_archive_round_trip_and_kind_filter(store: SessionStore, sid: str):
    assert store.archive(sid, kind="compaction", payload={"messages": [{"role": "user"}]}) == 1
    assert store.archive(sid, kind="note", payload={"text": "x"}) == 2
    assert store.archive(sid, kind="compaction", payload={"messages": []}) == 3
    assert [a.seq for a in store.archived(sid)] == [1, 2, 3]
    compactions = store.archived(sid, kind="compaction")
    assert [(a.seq, a.payload) for a in compactions] == [
        (1, {"messages": [{"role": "user"}]}),
        (3, {"messages": []}),
    ]
    assert store.archived(sid, "none") == []


def test_rollout_summary_counts_activity_records_not_turns(store: SessionStore, sid: str):
    for step in range(3):
        store.append_message(sid, {"role": "assistant", "content": f"s{step}"}, delegation_id="d")
    store.append_message(sid, {"role": "user", "content": "u"}, delegation_id="d")
    store.append_event(sid, SUB_AGENT_ACTIVITY, {"step": 1}, delegation_id="d")
    store.append_event(sid, SUB_AGENT_ACTIVITY, {"step": 2}, delegation_id="d")
    store.append_event(sid, "other", {}, delegation_id="d")
    store.append_event(sid, SUB_AGENT_ACTIVITY, {"step": 1})
    summary = store.rollout_summary(sid, delegation_id="d")
    assert (summary.effective_steps, summary.assistant_turns) == (2, 3)
    top = store.rollout_summary(sid)
    assert (top.effective_steps, top.assistant_turns) == (1, 0)


def test_every_write_for_an_unknown_session_raises_and_writes_nothing(store: SessionStore):
    writes = [
        lambda: store.append_message("nope", {"role": "user"}),
        lambda: store.append_event("nope", "x", {}),
        lambda: store.record_tool_call("nope", call_id="c", name="t", arguments="", started_at=0),
        lambda: store.record_tool_result("nope", "c", content="", ok=True, kind=None, ended_at=0),
        lambda: store.add_usage("nope", model="m", input_tokens=0, output_tokens=0, cost=None),
        lambda: store.write_checkpoint("nope", step=0, data={}),
        lambda: store.archive("nope", kind="k", payload={}),
        lambda: store.set_status("nope", "failed"),
        lambda: store.set_title("nope", "t"),
    ]
    for write in writes:
        with pytest.raises(SessionNotFoundError):
            write()
    reads = [
        lambda: store.messages("nope"),
        lambda: store.events("nope"),
        lambda: store.tool_calls("nope"),
        lambda: store.usage("nope"),
        lambda: store.latest_checkpoint("nope"),
        lambda: store.archived("nope"),
        lambda: store.rollout_summary("nope"),
        lambda: store.export_session("nope"),
    ]
    for read in reads:
        with pytest.raises(SessionNotFoundError):
            read()
    with store._read() as (conn, _):
        for table in ("messages", "events", "tool_calls", "usage", "checkpoints", "archive"):
            assert conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0] == 0


def test_sequences_are_per_session_and_per_kind(store: SessionStore):
    a = store.create_session(workspace="/w").id
    b = store.create_session(workspace="/w").id
    assert store.append_message(a, {}) == 1
    assert store.append_message(b, {}) == 1
    assert store.append_event(a, "x", {}) == 1
    assert store.append_message(a, {}) == 2
    assert store.archive(a, kind="k", payload={}) == 1
    assert store.add_usage(a, model="m", input_tokens=0, output_tokens=0, cost=None) == 1
    assert store.write_checkpoint(a, step=0, data={}) == 1


def test_export_session_has_everything_and_is_json(store: SessionStore, clock: FakeClock, sid: str):
    store.set_title(sid, "t")
    store.append_message(sid, {"role": "user", "content": "hi"}, agent="chat")
    store.append_event(sid, "turn", {"n": 1})
    store.record_tool_call(sid, call_id="c", name="t", arguments="{}", started_at=1.0)
    store.add_usage(sid, model="m", input_tokens=2, output_tokens=3, cost=None)
    store.write_checkpoint(sid, step=1, data={"k": "v"})
    store.write_checkpoint(sid, step=2, data={"k": "w"})
    store.archive(sid, kind="compaction", payload={"dropped": 3})
    exported = store.export_session(sid)
    assert json.loads(json.dumps(exported)) == exported
    assert exported["format"] == "yagent.session"
    assert exported["schema_version"] == latest_version() == 3
    assert exported["session"]["id"] == sid
    assert exported["session"]["title"] == "t"
    assert exported["messages"] == store.messages(sid)
    assert exported["events"] == [e.to_dict() for e in store.events(sid)]
    assert exported["tool_calls"][0]["ended_at"] is None
    assert exported["usage"]["totals"]["cost"] is None
    assert exported["usage"]["totals"]["cost_complete"] is False
    assert exported["usage"]["records"][0]["input_tokens"] == 2
    assert [c["step"] for c in exported["checkpoints"]] == [1, 2]
    assert exported["archive"] == [
        {"seq": 1, "ts": clock.value, "kind": "compaction", "payload": {"dropped": 3}}
    ]
