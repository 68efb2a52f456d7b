"""Round trips of messages, rollout events and tool calls; ordering, filters, and payloads
refused before anything is written."""

from __future__ import annotations

import json
import math
from types import MappingProxyType
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from yagent.memory import (
    SUB_AGENT_ACTIVITY,
    SessionStore,
    ToolCallNotFoundError,
    message_body,
)

from .conftest import FakeClock


def test_messages_round_trip_in_order_with_their_metadata(
    store: SessionStore, clock: FakeClock, sid: str
):
    sent = [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "修复测试"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "args": {"n": 1.5}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "ok"},
    ]
    seqs = []
    for index, message in enumerate(sent):
        clock.advance(1)
        seqs.append(
            store.append_message(sid, message, agent="coder", delegation_id=f"d{index % 2}")
        )
    assert seqs == [1, 2, 3, 4]
    rows = store.messages(sid)
    assert [message_body(row) for row in rows] == sent
    assert [row["seq"] for row in rows] == [1, 2, 3, 4]
    assert rows[0]["ts"] == clock.value - 3
    assert rows[0]["agent"] == "coder"
    assert [row["delegation_id"] for row in rows] == ["d0", "d1", "d0", "d1"]
    assert [row["seq"] for row in store.messages(sid, delegation_id="d1")] == [2, 4]
    assert store.messages(sid, delegation_id="") == []


def test_message_refuses_reserved_keys_and_non_objects(store: SessionStore, sid: str):
    with pytest.raises(ValueError, match="seq"):
        store.append_message(sid, {"role": "user", "seq": 3})
    with pytest.raises(TypeError, match="JSON object"):
        store.append_message(sid, ["role", "user"])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="agent"):
        store.append_message(sid, {"role": "user"}, agent=None)  # type: ignore[arg-type]
    assert store.messages(sid) == []


def test_a_row_read_back_can_be_appended_again_through_message_body(store: SessionStore, sid: str):
    store.append_message(sid, {"role": "user", "content": "x"}, agent="a")
    row = store.messages(sid)[0]
    store.append_message(sid, message_body(row), agent=row["agent"])
    assert message_body(store.messages(sid)[1]) == {"role": "user", "content": "x"}


def test_events_round_trip_and_filter(store: SessionStore, sid: str):
    store.append_event(sid, "step_start", {"step": 1})
    store.append_event(sid, SUB_AGENT_ACTIVITY, {"step": 1, "tools": 2}, delegation_id="d1")
    store.append_event(sid, "step_end", {"step": 1})
    store.append_event(sid, SUB_AGENT_ACTIVITY, {"step": 2}, delegation_id="d1")

    events = store.events(sid)
    assert [(e.seq, e.type, e.delegation_id) for e in events] == [
        (1, "step_start", ""),
        (2, SUB_AGENT_ACTIVITY, "d1"),
        (3, "step_end", ""),
        (4, SUB_AGENT_ACTIVITY, "d1"),
    ]
    assert events[1].payload == {"step": 1, "tools": 2}
    assert [e.seq for e in store.events(sid, since=2)] == [3, 4]
    assert [e.seq for e in store.events(sid, types=[SUB_AGENT_ACTIVITY])] == [2, 4]
    assert [e.seq for e in store.events(sid, types="step_end")] == [3]
    assert [e.seq for e in store.events(sid, types=["step_start", "step_end"])] == [1, 3]
    assert store.events(sid, types=[]) == []
    assert [e.seq for e in store.events(sid, delegation_id="")] == [1, 3]
    assert [e.seq for e in store.events(sid, since=2, delegation_id="d1")] == [4]
    assert events[0].to_dict() == {
        "seq": 1,
        "ts": events[0].ts,
        "type": "step_start",
        "delegation_id": "",
        "payload": {"step": 1},
    }


@pytest.mark.parametrize(
    ("payload", "where"),
    [
        ({"a": {1, 2}}, "set"),
        ({"a": b"raw"}, "bytes"),
        ({1: "x"}, "non-string key"),
        ({"a": [1, float("nan")]}, "nan"),
        ({"a": math.inf}, "inf"),
        ({"a": object()}, "object"),
    ],
)
def test_non_json_payload_raises_type_error_before_anything_is_written(
    store: SessionStore, clock: FakeClock, sid: str, payload: dict[Any, Any], where: str
):
    before = store.get_session(sid)
    clock.advance(1)
    with pytest.raises(TypeError, match=r"event payload|JSON"):
        store.append_event(sid, "x", payload)
    with pytest.raises(TypeError):
        store.append_message(sid, payload)
    with pytest.raises(TypeError):
        store.archive(sid, kind="k", payload=payload)
    with pytest.raises(TypeError):
        store.write_checkpoint(sid, step=1, data=payload)
    assert store.events(sid) == []
    assert store.messages(sid) == []
    assert store.archived(sid) == []
    assert store.latest_checkpoint(sid) is None
    assert store.get_session(sid) == before


def test_type_error_names_the_path_of_the_bad_value(store: SessionStore, sid: str):
    with pytest.raises(TypeError, match=r"\['a'\]\[1\]\['b'\] is a set"):
        store.append_event(sid, "x", {"a": [0, {"b": {1}}]})


def test_circular_payload_is_refused(store: SessionStore, sid: str):
    looped: dict[str, Any] = {}
    looped["self"] = looped
    with pytest.raises(TypeError, match="circular"):
        store.append_event(sid, "x", looped)


def test_tuples_and_mappings_are_stored_as_their_json_form(store: SessionStore, sid: str):
    store.append_event(sid, "x", MappingProxyType({"t": (1, (2, 3)), "m": MappingProxyType({})}))
    assert store.events(sid)[0].payload == {"t": [1, [2, 3]], "m": {}}


def test_lone_surrogates_in_json_survive_and_in_plain_text_are_refused(
    store: SessionStore, sid: str
):
    store.append_message(sid, {"role": "assistant", "content": "broken \ud83d tail 字"})
    assert message_body(store.messages(sid)[0]) == {
        "role": "assistant",
        "content": "broken \ud83d tail 字",
    }
    with pytest.raises(ValueError, match="surrogate"):
        store.record_tool_call(sid, call_id="c", name="t", arguments="\udcff", started_at=0.0)
    assert store.tool_calls(sid) == []


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(payload=st.dictionaries(st.text(max_size=8), json_values, max_size=5))
def test_any_json_object_round_trips(store: SessionStore, sid: str, payload: dict[str, Any]):
    seq = store.append_event(sid, "prop", payload)
    assert store.events(sid, since=seq - 1)[0].payload == payload
    assert json.loads(json.dumps(payload)) == payload


def test_tool_call_is_visible_before_its_result(store: SessionStore, sid: str):
    assert (
        store.record_tool_call(
            sid, call_id="c1", name="read", arguments='{"path": "a"}', started_at=10.0
        )
        == 1
    )
    store.record_tool_call(
        sid, call_id="c2", name="run", arguments="{bad json", delegation_id="d", started_at=11
    )
    pending = store.tool_calls(sid)
    assert [(c.call_id, c.ended_at, c.ok, c.content) for c in pending] == [
        ("c1", None, None, None),
        ("c2", None, None, None),
    ]
    assert pending[1].arguments == "{bad json"
    assert pending[1].started_at == 11.0

    assert (
        store.record_tool_result(sid, "c2", content="boom", ok=False, kind="timeout", ended_at=12.5)
        == 2
    )
    done = store.tool_calls(sid)
    assert (done[1].ended_at, done[1].ok, done[1].kind, done[1].content) == (
        12.5,
        False,
        "timeout",
        "boom",
    )
    assert done[0].ended_at is None
    assert [c.call_id for c in store.tool_calls(sid, delegation_id="d")] == ["c2"]


def test_tool_result_matching_reused_and_replayed_call_ids(store: SessionStore, sid: str):
    # Two open calls with one id (a provider that repeats ids): results fill them in order.
    store.record_tool_call(sid, call_id="x", name="a", arguments="{}", started_at=1.0)
    store.record_tool_call(sid, call_id="x", name="b", arguments="{}", started_at=1.0)
    assert store.record_tool_result(sid, "x", content="1", ok=True, kind=None, ended_at=2.0) == 1
    assert store.record_tool_result(sid, "x", content="2", ok=True, kind=None, ended_at=2.0) == 2
    # No open call left: a second output for the id overwrites the latest (last wins).
    assert store.record_tool_result(sid, "x", content="3", ok=True, kind=None, ended_at=3.0) == 2
    assert [c.content for c in store.tool_calls(sid)] == ["1", "3"]
    # A delegation narrows the match.
    store.record_tool_call(
        sid, call_id="y", name="a", arguments="{}", delegation_id="p", started_at=4
    )
    store.record_tool_call(
        sid, call_id="y", name="a", arguments="{}", delegation_id="q", started_at=4
    )
    assert (
        store.record_tool_result(
            sid, "y", content="q", ok=True, kind=None, ended_at=5, delegation_id="q"
        )
        == 4
    )
    with pytest.raises(ToolCallNotFoundError) as missing:
        store.record_tool_result(
            sid, "y", content="", ok=True, kind=None, ended_at=5, delegation_id="r"
        )
    assert missing.value.call_id == "y"
    assert "'y'" in str(missing.value)


def test_tool_call_arguments_are_checked(store: SessionStore, sid: str):
    with pytest.raises(TypeError, match="started_at"):
        store.record_tool_call(sid, call_id="c", name="t", arguments="{}", started_at=math.nan)
    with pytest.raises(TypeError, match="arguments"):
        store.record_tool_call(sid, call_id="c", name="t", arguments={}, started_at=1.0)  # type: ignore[arg-type]
    store.record_tool_call(sid, call_id="c", name="t", arguments="{}", started_at=1.0)
    with pytest.raises(TypeError, match="ok"):
        store.record_tool_result(sid, "c", content="", ok=1, kind=None, ended_at=2.0)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="kind"):
        store.record_tool_result(sid, "c", content="", ok=True, kind=3, ended_at=2.0)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="ended_at"):
        store.record_tool_result(sid, "c", content="", ok=True, kind=None, ended_at=True)
    assert store.tool_calls(sid)[0].ended_at is None
