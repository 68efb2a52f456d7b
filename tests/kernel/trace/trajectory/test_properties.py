"""Properties: the pairing states depend on what was seen, never on the order it was seen in."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from yagent.kernel.trace.trajectory import Timing, Trajectory, Turn

from .vocab import BOOK, ev

Event = tuple[str, dict[str, Any]]


@st.composite
def sessions(draw: st.DrawFn) -> list[Event]:
    """One turn's events: steps declaring calls, each call with 0–2 starts and 0–2 results."""
    events: list[Event] = []
    for step in range(1, draw(st.integers(1, 3)) + 1):
        lane = draw(st.sampled_from(["", "d1"]))
        ids = [f"s{step}c{i}" for i in range(draw(st.integers(0, 4)))]
        events.append(ev("think", lane=lane, n=step))
        events.append(ev("thought", lane=lane, n=step, wants=[{"id": i} for i in ids]))
        for call_id in ids:
            ok = draw(st.booleans())
            half = {"lane": lane, "id": call_id, "n": step, "tool": "t"}
            events += [("invoke", dict(half))] * draw(st.integers(0, 2))
            events += [("answer", {**half, "ok": ok})] * draw(st.integers(0, 2))
    return events


def project(events: list[Event]) -> Turn:
    t = Trajectory(BOOK)
    for i, (type_, payload) in enumerate(events):
        t.feed(type_, payload, ts=float(i), seq=i)
    (turn,) = t.turns()
    return turn


def states(turn: Turn) -> dict[str, tuple[object, ...]]:
    return {
        r.id: (r.kind, r.pairing, tuple(sorted(r.history)), r.declared, r.parent_id, r.name, r.ok)
        for r in turn.rows
    }


@settings(max_examples=150, deadline=None)
@given(data=st.data(), events=sessions())
def test_any_permutation_ends_in_the_same_pairing_states(
    data: st.DataObject, events: list[Event]
) -> None:
    shuffled = data.draw(st.permutations(events))
    a, b = project(events), project(shuffled)
    assert states(a) == states(b)
    sa, sb = a.summary, b.summary
    for field in ("paired", "missing_result", "unpaired_result", "duplicate_result"):
        assert getattr(sa, field) == getattr(sb, field), field
    assert sa.duplicate_call == sb.duplicate_call
    assert sa.calls == sb.calls
    assert sa.steps == sb.steps


@settings(max_examples=150, deadline=None)
@given(data=st.data(), events=sessions())
def test_durations_exist_only_as_measurements(data: st.DataObject, events: list[Event]) -> None:
    turn = project(data.draw(st.permutations(events)))
    for row in turn.rows:
        if row.timing is Timing.MEASURED:
            assert row.duration is not None
            assert row.duration >= 0
            assert row.opens
            assert row.closes
        else:
            assert row.duration is None


@settings(max_examples=60, deadline=None)
@given(events=sessions())
def test_a_complete_valid_sequence_pairs_every_call(events: list[Event]) -> None:
    # keep exactly one start and one result per call: the valid sequence
    seen: set[tuple[str, str]] = set()
    valid = []
    for type_, payload in events:
        key = (type_, str(payload.get("id", "")) + str(payload.get("n")))
        if type_ in ("invoke", "answer") and key in seen:
            continue
        seen.add(key)
        valid.append((type_, payload))
    ids = {p["id"] for t, p in valid if t == "invoke"} & {
        p["id"] for t, p in valid if t == "answer"
    }
    valid = [(t, p) for t, p in valid if t not in ("invoke", "answer") or p["id"] in ids]
    turn = project(valid)
    calls = [r for r in turn.rows if r.kind.value == "call"]
    assert all(r.pairing is not None and r.pairing.value == "paired" for r in calls)
    assert all(r.history == () for r in calls)
    assert turn.summary.unanswered == 0
