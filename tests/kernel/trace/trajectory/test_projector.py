"""The projector: rows updated in place, pairing states, derived durations, turns, summary."""

from __future__ import annotations

import dataclasses

import pytest

from yagent.kernel.trace.trajectory import (
    Kind,
    Pairing,
    Row,
    RowKind,
    Signal,
    Timing,
    Trajectory,
    TurnProjector,
)

from .vocab import BOOK, ev, feed


def one_turn(t: Trajectory):  # type: ignore[no-untyped-def]
    (turn,) = t.turns()
    return turn


def test_a_row_has_no_stored_duration_only_a_derived_one() -> None:
    assert "duration" not in {f.name for f in dataclasses.fields(Row)}
    assert isinstance(Row.duration, property)


def test_call_then_result_is_paired_with_measured_duration() -> None:
    t = feed([ev("invoke", id="c1", n=1, tool="grep"), ev("answer", id="c1", n=1, ok=True)])
    row = one_turn(t).row("call:/c1")
    assert row is not None
    assert row.kind is RowKind.CALL
    assert row.name == "grep"
    assert row.pairing is Pairing.PAIRED
    assert row.history == ()
    assert (row.start, row.end) == (100.0, 101.0)
    assert row.timing is Timing.MEASURED
    assert row.duration == 1.0
    assert row.ok is True
    assert row.parent_id == "step:/1"


def test_missing_result_is_a_current_state_that_clears_when_the_result_arrives() -> None:
    t = Trajectory(BOOK)
    t.feed(*ev("invoke", id="c1", n=1), ts=10.0)
    row = t.current.row("call:/c1")  # type: ignore[union-attr]
    assert row is not None
    assert row.pairing is Pairing.MISSING_RESULT
    assert row.timing is Timing.OPEN
    assert row.duration is None
    assert row.end is None
    update = t.feed(*ev("answer", id="c1", n=1, ok=True), ts=12.5)
    assert update.changed == ("call:/c1",)
    assert update.recognised
    row = t.current.row("call:/c1")  # type: ignore[union-attr]
    assert row is not None
    assert row.pairing is Pairing.PAIRED
    assert row.duration == 2.5


def test_result_before_call_backfills_the_start_and_is_never_measured() -> None:
    t = Trajectory(BOOK)
    t.feed(*ev("answer", id="c1", n=1, ok=True), ts=20.0)
    row = t.current.row("call:/c1")  # type: ignore[union-attr]
    assert row is not None
    assert row.pairing is Pairing.UNPAIRED_RESULT
    assert row.timing is Timing.BACKFILLED
    assert row.start == row.end == 20.0
    assert row.duration is None
    t.feed(*ev("invoke", id="c1", n=1), ts=18.0)  # the call shows up late
    row = t.current.row("call:/c1")  # type: ignore[union-attr]
    assert row is not None
    assert row.pairing is Pairing.PAIRED  # the current state cleared
    assert row.start == 18.0
    assert row.timing is Timing.INVERTED
    assert row.duration is None  # inverted order: no measurement, even with both times


def test_duplicates_are_permanent_history_beside_the_current_state() -> None:
    t = feed(
        [
            ev("invoke", id="c1", n=1),
            ev("invoke", id="c1", n=1),
            ev("answer", id="c1", n=1, ok=True),
            ev("answer", id="c1", n=1, ok=False),
        ]
    )
    row = one_turn(t).row("call:/c1")
    assert row is not None
    assert row.pairing is Pairing.PAIRED
    assert set(row.history) == {Pairing.DUPLICATE_CALL, Pairing.DUPLICATE_RESULT}
    assert (row.opens, row.closes) == (2, 2)
    assert row.ok is True  # the first result decides; a duplicate does not rewrite it
    assert row.start == 100.0
    assert row.end == 102.0


def test_duplicate_result_alone_stays_in_history_after_pairing() -> None:
    t = feed([ev("answer", id="c", n=1), ev("answer", id="c", n=1), ev("invoke", id="c", n=1)])
    row = one_turn(t).row("call:/c")
    assert row is not None
    assert row.pairing is Pairing.PAIRED
    assert row.history == (Pairing.DUPLICATE_RESULT,)


def test_a_half_without_time_leaves_the_row_untimed() -> None:
    t = Trajectory(BOOK)
    t.feed(*ev("invoke", id="c", n=1), ts=None)
    t.feed(*ev("answer", id="c", n=1), ts=5.0)
    row = t.current.row("call:/c")  # type: ignore[union-attr]
    assert row is not None
    assert row.timing is Timing.UNTIMED
    assert row.start is None  # the start was not measured, and nothing stands in for it
    assert row.end == 5.0
    assert row.duration is None


def test_a_clock_running_backwards_gives_no_duration() -> None:
    t = Trajectory(BOOK)
    t.feed(*ev("invoke", id="c", n=1), ts=10.0)
    t.feed(*ev("answer", id="c", n=1), ts=9.0)
    row = t.current.row("call:/c")  # type: ignore[union-attr]
    assert row is not None
    assert row.timing is Timing.INVERTED
    assert row.duration is None


def test_steps_and_spans_are_intervals_without_pairing_and_with_attrs() -> None:
    t = feed(
        [
            ev("sub", lane="d1", parent="", via="c0", who="helper"),
            ev("think", lane="d1", n=1, who="helper"),
            ev("thought", lane="d1", n=1, model="m", usage={"in": 7, "out": 3}),
            ev("over", lane="d1", ok=True),
        ]
    )
    turn = one_turn(t)
    step = turn.row("step:d1/1")
    span = turn.row("span:d1")
    assert step is not None
    assert span is not None
    assert step.pairing is None
    assert step.history == ()
    assert step.parent_id == "span:d1"
    assert step.scope == "d1"
    assert dict(step.attrs) == {"n": 1, "model": "m", "input_tokens": 7, "output_tokens": 3}
    assert step.duration == 1.0
    assert span.kind is RowKind.SPAN
    assert span.parent_id == "call:/c0"
    assert span.duration == 3.0
    assert span.ok is True


def test_rows_are_in_timeline_order_and_rows_without_time_go_last() -> None:
    t = Trajectory(BOOK)
    t.feed(*ev("invoke", id="late", n=1), ts=50.0)
    t.feed(*ev("invoke", id="none", n=1), ts=None)
    t.feed(*ev("invoke", id="early", n=1), ts=10.0)
    ids = [r.id for r in t.current.rows()]  # type: ignore[union-attr]
    assert ids == ["call:/early", "call:/late", "call:/none"]


def test_declarations_mark_calls_in_any_order() -> None:
    before = feed([ev("thought", n=1, wants=[{"id": "c1"}]), ev("invoke", id="c1", n=1)])
    after = feed([ev("invoke", id="c1", n=1), ev("thought", n=1, wants=[{"id": "c1"}])])
    undeclared = feed([ev("invoke", id="c1", n=1)])
    for t in (before, after):
        row = one_turn(t).row("call:/c1")
        assert row is not None
        assert row.declared
    row = one_turn(undeclared).row("call:/c1")
    assert row is not None
    assert not row.declared
    assert before.current.declared() == frozenset({"call:/c1"})  # type: ignore[union-attr]


def test_unrecognised_and_malformed_are_counted_not_dropped_silently() -> None:
    t = Trajectory(BOOK)
    assert not t.feed("mystery", {}).recognised
    assert t.feed("chatter", {}).recognised  # ignored on purpose: no signal, not an error
    t.feed(*ev("invoke", n=1), ts=1.0)  # no id: names no row
    t.feed(*ev("invoke", id="x", n=1), ts=1.0)
    t.current.apply(Signal(Kind.STEP_START, "call:/x", ts=2.0))  # type: ignore[union-attr]
    assert t.events == 4
    assert t.unrecognised == 1
    summary = one_turn(t).summary
    assert summary.malformed == 2
    assert summary.signals == 3
    assert summary.calls == 1


def test_summary_counts_states_failures_and_unmeasured_rows() -> None:
    t = feed(
        [
            ev("think", n=1),
            ev("thought", n=1, wants=[{"id": "a"}, {"id": "b"}]),
            ev("invoke", id="a", n=1),
            ev("invoke", id="b", n=1),
            ev("answer", id="a", n=1, ok=False, why="timeout"),
            ev("answer", id="z", n=1, ok=True),
            ev("answer", id="z", n=1, ok=True),
            ev("over", status="done"),
        ]
    )
    turn = one_turn(t)
    s = turn.summary
    assert (s.steps, s.calls, s.spans) == (1, 3, 0)
    assert (s.paired, s.missing_result, s.unpaired_result) == (1, 1, 1)
    assert (s.duplicate_result, s.duplicate_call) == (1, 0)
    assert s.failed == 1
    assert s.unanswered == 2
    assert s.unmeasured == 2  # b is open, z is backfilled
    assert (s.start, s.end, s.duration) == (100.0, 107.0, 7.0)
    assert turn.closed
    assert dict(turn.attrs) == {"status": "done"}
    failed = turn.row("call:/a")
    assert failed is not None
    assert failed.failure == "timeout"
    plain_fail = feed([ev("invoke", id="q", n=1), ev("answer", id="q", n=1, ok=False)])
    row = one_turn(plain_fail).row("call:/q")
    assert row is not None
    assert row.failure == "_OTHER"
    assert turn.row("call:/b").failure is None  # type: ignore[union-attr]


def test_an_open_turn_has_no_end_and_no_duration() -> None:
    s = one_turn(feed([ev("invoke", id="a", n=1)])).summary
    assert s.end is None
    assert s.duration is None
    assert not one_turn(feed([ev("invoke", id="a", n=1)])).closed


def test_turn_end_starts_a_new_turn_and_ids_are_scoped_per_turn() -> None:
    t = feed(
        [
            ev("invoke", id="c1", n=1),
            ev("answer", id="c1", n=1),
            ev("over"),
            ev("over"),  # duplicate end: no empty turn appears
            ev("answer", id="c1", n=1),  # same id, next turn: a new row, not a duplicate
        ]
    )
    first, second = t.turns()
    assert (first.index, second.index) == (0, 1)
    assert first.closed
    assert not second.closed
    assert first.duplicate_ends == 1
    assert first.row("call:/c1").pairing is Pairing.PAIRED  # type: ignore[union-attr]
    assert second.row("call:/c1").pairing is Pairing.UNPAIRED_RESULT  # type: ignore[union-attr]
    update = t.feed("mystery", {})
    assert update.turn == 1
    assert t.turn(0) == first
    with pytest.raises(IndexError):
        t.turn(2)


def test_a_turn_end_first_makes_one_empty_closed_turn() -> None:
    t = Trajectory(BOOK)
    assert t.current is None
    assert t.feed("mystery", {}).turn == 0
    t.feed(*ev("over"), ts=3.0)
    (turn,) = t.turns()
    assert turn.closed
    assert turn.rows == ()
    assert turn.summary.start == turn.summary.end == 3.0
    assert turn.row("anything") is None


def test_turn_projector_row_lookup_and_kind_clash() -> None:
    p = TurnProjector(4)
    assert p.row("nope") is None
    assert p.apply(Signal(Kind.CALL, "r", ts=1.0)) == "r"
    assert p.apply(Signal(Kind.SPAN_END, "r", ts=2.0)) is None  # a call row cannot end as a span
    assert p.apply(Signal(Kind.RESULT, None)) is None
    turn = p.turn()
    assert turn.index == 4
    assert turn.summary.malformed == 2
    assert turn.row("r").to_dict()["pairing"] == "missing_result"  # type: ignore[union-attr]


def test_row_to_dict_is_json_ready() -> None:
    row = one_turn(feed([ev("invoke", id="a", n=1), ev("answer", id="a", n=1)])).rows[0]
    data = row.to_dict()
    assert data["duration"] == 1.0
    assert data["kind"] == "call"
    assert data["timing"] == "measured"
    assert data["history"] == []
