"""Span plans: one root per turn, parents before children, declared attributes only."""

from __future__ import annotations

from yagent.kernel.trace.trajectory import (
    ATTR_SPECS,
    FORBIDDEN_LABELS,
    ROOT_ID,
    Kind,
    Signal,
    SpanEvent,
    SpanPlan,
    TurnProjector,
    attr_spec_of,
    plan_turn,
)

from .vocab import ev, feed

DECLARED = {s.name for s in ATTR_SPECS}


def session() -> list[tuple[str, dict[str, object]]]:
    return [
        ev("think", n=1, who="lead"),
        ev("thought", n=1, model="m-1", usage={"in": 11, "out": 4}, wants=[{"id": "c1"}]),
        ev("invoke", id="c1", n=1, tool="delegate"),
        ev("sub", lane="d1", parent="", via="c1", who="helper"),
        ev("think", lane="d1", n=1),
        ev("thought", lane="d1", n=1, model="m-2", usage={"in": 1, "out": 1}),
        ev("invoke", lane="d1", id="k1", n=1, tool="grep"),
        ev("answer", lane="d1", id="k1", n=1, tool="grep", ok=False, why="timeout"),
        ev("over", lane="d1", ok=True, status="sub-done"),
        ev("answer", id="c1", n=1, tool="delegate", ok=True),
        ev("over", status="done"),
    ]


def by_id(plans: tuple[SpanPlan, ...]) -> dict[str, SpanPlan]:
    return {p.id: p for p in plans}


def test_one_root_per_turn_and_every_parent_before_its_children() -> None:
    (turn,) = feed(session()).turns()
    plans = plan_turn(turn, host={"conversation_id": "sess-1"})
    assert plans[0].id == ROOT_ID
    assert plans[0].parent_id is None
    assert sum(p.parent_id is None for p in plans) == 1
    seen = set()
    for plan in plans:
        assert plan.parent_id is None or plan.parent_id in seen
        seen.add(plan.id)
    tree = {p.id: p.parent_id for p in plans}
    assert tree == {
        ROOT_ID: None,
        "step:/1": ROOT_ID,
        "call:/c1": "step:/1",
        "span:d1": "call:/c1",
        "step:d1/1": "span:d1",
        "call:d1/k1": "step:d1/1",
    }


def test_attributes_are_declared_typed_and_named_by_the_conventions() -> None:
    (turn,) = feed(session()).turns()
    plans = by_id(plan_turn(turn, host={"conversation_id": "sess-1"}))
    root = plans[ROOT_ID]
    assert root.attributes["gen_ai.operation.name"] == "invoke_workflow"
    assert root.attributes["gen_ai.conversation.id"] == "sess-1"
    assert root.attributes["yagent.run.status"] == "done"
    assert root.attributes["yagent.turn.closed"] is True
    assert root.attributes["yagent.turn.index"] == 0
    step = plans["step:/1"]
    assert step.name == "chat m-1"
    assert step.attributes["gen_ai.request.model"] == "m-1"
    assert step.attributes["gen_ai.usage.input_tokens"] == 11
    assert step.attributes["gen_ai.usage.output_tokens"] == 4
    call = plans["call:d1/k1"]
    assert call.name == "execute_tool grep"
    assert call.attributes["gen_ai.tool.call.id"] == "k1"
    assert call.attributes["error.type"] == "timeout"
    assert call.attributes["yagent.pairing"] == "paired"
    assert call.attributes["yagent.timing"] == "measured"
    assert call.failed
    assert plans["span:d1"].name == "invoke_agent helper"
    assert plans["span:d1"].attributes["gen_ai.operation.name"] == "invoke_agent"
    assert plans["span:d1"].attributes["yagent.run.status"] == "sub-done"
    for plan in plans.values():
        assert set(plan.attributes) <= DECLARED
        assert plan.rejected == ()
        for name, value in plan.attributes.items():
            assert attr_spec_of(name).domain.accepts(value), (name, value)
            assert plan.kind in attr_spec_of(name).applies
    assert "error.type" not in plans["call:/c1"].attributes


def test_times_are_the_rows_and_unmeasured_rows_borrow_and_say_so() -> None:
    (turn,) = feed(
        [
            ev("think", n=1),
            ev("invoke", id="open", n=1),
            ev("answer", id="back", n=1),
            ev("over"),
        ]
    ).turns()
    plans = by_id(plan_turn(turn))
    assert (plans[ROOT_ID].start, plans[ROOT_ID].end) == (100.0, 103.0)
    opened = plans["call:/open"]
    assert (opened.start, opened.end) == (101.0, 103.0)  # no result: ends with the turn
    assert opened.attributes["yagent.timing"] == "open"
    assert opened.attributes["yagent.pairing"] == "missing_result"
    back = plans["call:/back"]
    assert back.start == back.end == 102.0
    assert back.attributes["yagent.timing"] == "backfilled"
    assert back.attributes["yagent.pairing"] == "unpaired_result"
    assert plans["step:/1"].end == 103.0  # a step that never ended


def test_a_row_without_any_time_borrows_its_parents_start() -> None:
    p = TurnProjector()
    p.apply(Signal(Kind.STEP_START, "s", ts=5.0))
    p.apply(Signal(Kind.CALL, "c", parent="s"))
    p.apply(Signal(Kind.TURN_END, None, ts=9.0))
    plans = by_id(plan_turn(p.turn()))
    assert (plans["c"].start, plans["c"].end) == (5.0, 9.0)
    assert plans["c"].attributes["yagent.timing"] == "open"


def test_an_untimed_turn_uses_now() -> None:
    p = TurnProjector()
    p.apply(Signal(Kind.CALL, "c"))
    (root, call) = plan_turn(p.turn(), now=42.0)
    assert root.start == root.end == call.start == call.end == 42.0


def test_absent_parents_and_cycles_hang_on_the_root_as_orphans() -> None:
    p = TurnProjector()
    p.apply(Signal(Kind.CALL, "a", ts=1.0, parent="b"))
    p.apply(Signal(Kind.CALL, "b", ts=2.0, parent="a"))
    p.apply(Signal(Kind.CALL, "c", ts=3.0, parent="gone"))
    p.apply(Signal(Kind.CALL, "d", ts=4.0, parent="d"))
    plans = by_id(plan_turn(p.turn()))
    assert len(plans) == 5
    assert plans["c"].parent_id == ROOT_ID
    assert plans["c"].attributes["yagent.orphan"] is True
    assert plans["d"].parent_id == ROOT_ID
    assert plans["d"].attributes["yagent.orphan"] is True
    cycle = {plans["a"].parent_id, plans["b"].parent_id}
    assert ROOT_ID in cycle  # the cycle was cut: one hangs on the root, the other below it
    assert cycle - {ROOT_ID} <= {"a", "b"}


def test_values_outside_their_domain_are_not_emitted_and_are_listed() -> None:
    (turn,) = feed(
        [ev("think", n=1), ev("thought", n=1, model="", usage={"in": -3, "out": "many"})]
    ).turns()
    step = by_id(plan_turn(turn))["step:/1"]
    assert "gen_ai.usage.input_tokens" not in step.attributes
    assert set(step.rejected) == {"gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens"}
    assert "gen_ai.request.model" not in step.attributes  # empty is absent, not out of domain
    assert step.name == "chat"


def test_notes_become_span_events_and_stray_notes_go_to_the_root() -> None:
    (turn,) = feed(session()).turns()
    note = SpanEvent("yagent.watchdog.x", None, {"yagent.row.id": "call:/zz"})
    plans = by_id(plan_turn(turn, notes={"step:/1": [note], "nowhere": [note]}, turn_failed=True))
    assert plans["step:/1"].events == (note,)
    assert plans[ROOT_ID].events == (note,)
    assert plans[ROOT_ID].failed


def test_no_forbidden_name_is_ever_declared_as_a_label() -> None:
    assert not {s.name for s in ATTR_SPECS if s.label} & FORBIDDEN_LABELS
