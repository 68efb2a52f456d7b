"""The watchdog: pairing invariants judged when a step closes; it warns and never decides."""

from __future__ import annotations

from yagent.kernel.trace.trajectory import (
    Kind,
    PairingSignal,
    Ref,
    RuleBook,
    Signal,
    SignalRule,
    Trajectory,
)
from yagent.kernel.trace.watchdog import PAIRING, Finding, FindingKind, Watchdog

from .trajectory.vocab import BOOK, CALL, ev

UNEXECUTED = FindingKind.DECLARED_NOT_EXECUTED
UNDECLARED = FindingKind.RESULT_WITHOUT_DECLARATION


def run(events: list[tuple[str, dict[str, object]]]) -> tuple[Watchdog, list[Finding]]:
    t, w, found = Trajectory(BOOK), Watchdog(), []
    for i, (type_, payload) in enumerate(events):
        for signal in t.feed(type_, payload, ts=float(i)).signals:
            found += w.observe(signal)
    return w, found


def test_a_clean_step_raises_nothing() -> None:
    _, found = run(
        [
            ev("think", n=1),
            ev("thought", n=1, wants=[{"id": "a"}]),
            ev("invoke", id="a", n=1),
            ev("answer", id="a", n=1),
            ev("think", n=2),
            ev("over"),
        ]
    )
    assert found == []


def test_declared_call_never_executed_is_reported_when_the_step_closes() -> None:
    w = Watchdog()
    assert w.open_step("s1") == ()
    w.declare("s1", ["a", "b"])
    w.executed("a")
    assert w.findings == ()  # nothing is judged before the step closes
    found = w.open_step("s2")  # the next step of the lane closes s1
    assert found == (Finding(UNEXECUTED, "s1", "b"),)
    assert "never executed" in found[0].message
    assert w.findings == found


def test_result_without_declaration_is_reported_at_close() -> None:
    _, found = run(
        [
            ev("think", n=1),
            ev("thought", n=1, wants=[]),
            ev("answer", id="ghost", n=1),
            ev("over"),
        ]
    )
    assert found == [Finding(UNDECLARED, "step:/1", "call:/ghost")]
    assert "no step declared" in found[0].message
    assert found[0].to_dict()["kind"] == "result_without_declaration"


def test_a_result_after_its_step_closed_or_with_no_step_is_judged_at_once() -> None:
    w = Watchdog()
    w.open_step("s1")
    w.close_step("s1")
    assert w.result("late", "s1") == (Finding(UNDECLARED, "s1", "late"),)
    assert w.result("nostep") == (Finding(UNDECLARED, "", "nostep"),)
    w.declare("s2", ["ok"])
    assert w.result("ok", "s2") == ()
    assert w.close_step("s2") == (Finding(UNEXECUTED, "s2", "ok"),)
    assert w.close_step("s2") == ()  # closed once
    assert w.close_step("unknown") == ()


def test_a_result_for_a_step_not_yet_seen_waits_for_that_step() -> None:
    w = Watchdog()
    assert w.result("c", "s9") == ()
    w.declare("s9", ["c"])  # the declaration arrives later, before the close
    w.executed("c")
    assert w.close_all() == ()


def test_each_finding_is_reported_once() -> None:
    w = Watchdog()
    w.declare("s1", ["a", "a"])
    w.result("x", "s1")
    w.result("x", "s1")
    found = w.close_all()
    assert sorted(f.kind for f in found) == [UNEXECUTED, UNDECLARED]


def test_lanes_close_independently_and_a_lane_end_closes_its_steps() -> None:
    _, found = run(
        [
            ev("think", n=1),
            ev("thought", n=1, wants=[{"id": "top"}]),
            ev("think", lane="d1", n=1),
            ev("thought", lane="d1", n=1, wants=[{"id": "sub"}]),
            ev("think", lane="d1", n=2),  # closes d1's step 1 only
            ev("over", lane="d1"),  # closes d1's step 2
            ev("invoke", id="top", n=1),
            ev("over"),
        ]
    )
    assert found == [Finding(UNEXECUTED, "step:d1/1", "call:d1/sub", "d1")]


def test_turn_end_resets_so_call_ids_can_repeat() -> None:
    w, found = run(
        [
            ev("thought", n=1, wants=[{"id": "a"}]),
            ev("invoke", id="a", n=1),
            ev("over"),
            ev("answer", id="a", n=1),  # next turn: "a" was not declared there
            ev("over"),
        ]
    )
    assert found == [Finding(UNDECLARED, "step:/1", "call:/a")]
    assert w.findings == tuple(found)


def test_step_end_without_a_start_still_closes_with_the_turn() -> None:
    _, found = run([ev("thought", n=3, wants=[{"id": "z"}]), ev("over")])
    assert found == [Finding(UNEXECUTED, "step:/3", "call:/z")]


def test_signals_without_a_row_are_ignored_and_reopening_is_harmless() -> None:
    w = Watchdog()
    assert w.observe(Signal(Kind.CALL, None)) == ()
    assert w.observe(Signal(Kind.SPAN_START, "span:x")) == ()
    w.open_step("s", "L")
    assert w.open_step("s", "L") == ()  # the same step again: nothing closes
    assert w.close_scope("L") == ()
    assert w.reset() == ()


def test_a_nested_call_is_declared_by_its_executing_parent() -> None:
    from yagent.kernel.trace.trajectory.vocabulary import Kind, Signal

    dog = Watchdog()
    dog.open_step("step:1")
    dog.declare("step:1", ["call:p"])
    dog.observe(Signal(Kind.CALL, "call:p", parent="step:1"))
    dog.observe(Signal(Kind.CALL, "call:p#1", parent="call:p"))
    found = dog.observe(Signal(Kind.RESULT, "call:p#1", parent="call:p"))
    found += dog.observe(Signal(Kind.RESULT, "call:p", parent="step:1"))
    found += dog.close_all()
    assert found == ()
    orphan = Watchdog()
    orphan.observe(Signal(Kind.CALL, "call:q#1", parent="call:q"))  # parent never executed
    orphan.observe(Signal(Kind.RESULT, "call:q#1", parent="call:q"))
    assert [f.call for f in orphan.close_all()] == ["call:q#1"]


# -- what the watchdog reads: the pairing fields, nothing else --------------------------------
NESTED_BOOK = RuleBook(
    {
        **BOOK.rules,
        "host_call": SignalRule(Kind.CALL, CALL, Ref("call", ("lane", "via")), name="tool"),
        "host_answer": SignalRule(
            Kind.RESULT, CALL, Ref("call", ("lane", "via")), name="tool", ok="ok", outcome="why"
        ),
    },
    ignore=BOOK.ignored,
)
TROUBLED = [
    ev("think", n=1, who="a"),
    ev("thought", n=1, wants=[{"id": "a"}, {"id": "b"}, {"id": "p"}], model="m"),
    ev("invoke", id="a", n=1, tool="read"),
    ev("answer", id="a", n=1, tool="read", ok=True),
    ev("invoke", id="p", n=1, tool="program"),
    ev("host_call", id="p1", via="p", tool="read"),
    ev("host_answer", id="p1", via="p", tool="read", ok=False, why="denied"),
    ev("answer", id="p", n=1, tool="program", ok=True),
    ev("answer", id="z", n=1, tool="ghost", ok=True),  # a result nobody declared
    ev("sub", lane="d1", parent="", via="a", who="child"),
    ev("think", lane="d1", n=1),
    ev("thought", lane="d1", n=1, wants=[{"id": "k"}]),
    ev("over", lane="d1", ok=True, status="done"),
    ev("chatter"),
    ev("think", n=2),  # closes step 1: b declared, never executed
    ev("over", status="finished"),
]


class Reads:
    """A signal that records which of its fields are read."""

    def __init__(self, signal: Signal, seen: set[str]) -> None:
        self._signal, self._seen = signal, seen

    def __getattr__(self, name: str) -> object:
        self._seen.add(name)
        return getattr(self._signal, name)


def test_the_watchdog_reads_only_the_pairing_fields() -> None:
    """`PAIRING` is what the watchdog may read of a signal: a host that feeds it `pairing`
    signals (no times, names, outcomes or attributes) gets the same findings."""
    seen: set[str] = set()
    dog, found = Watchdog(), []
    for i, (type_, payload) in enumerate(TROUBLED):
        for signal in NESTED_BOOK.translate(type_, payload, ts=float(i), seq=i) or ():
            found += dog.observe(Reads(signal, seen))  # type: ignore[arg-type]
    assert {f.kind for f in found} == {UNEXECUTED, UNDECLARED}
    assert seen <= PAIRING
    assert {"kind", "row", "parent", "declares"} <= seen


def test_pairing_signals_are_the_translated_ones_with_only_the_pairing_fields() -> None:
    full, lean = Watchdog(), Watchdog()
    for i, (type_, payload) in enumerate(TROUBLED):
        signals = NESTED_BOOK.translate(type_, payload, ts=float(i), seq=i)
        pairs = NESTED_BOOK.pairing(type_, payload)
        assert (pairs is None) == (signals is None)
        assert [tuple(getattr(s, f) for f in PairingSignal._fields) for s in signals or ()] == [
            tuple(p) for p in pairs or ()
        ]
        assert set(PairingSignal._fields) == PAIRING
        assert [f for s in signals or () for f in full.observe(s)] == [
            f for s in pairs or () for f in lean.observe(s)
        ]
    assert full.findings == lean.findings
    assert full.findings


class Counting(Watchdog):
    """Counts the steps the watchdog is asked to close."""

    closes = 0

    def close_step(self, step: str) -> tuple[Finding, ...]:
        Counting.closes += 1
        return super().close_step(step)


def test_closing_a_turn_costs_what_is_open_not_how_many_steps_it_had() -> None:
    w = Counting()
    for n in range(1000):
        w.open_step(f"s{n}")  # closes the lane's previous step
        w.declare(f"s{n}", [f"c{n}"])
        w.executed(f"c{n}")
    w.open_step("other", scope="lane-b")
    Counting.closes = 0
    assert w.close_scope("lane-b") == ()
    assert w.close_all() == ()
    assert Counting.closes == 2  # the two open steps, not the turn's 1 001
    assert w.result("late", "s5") == (Finding(UNDECLARED, "s5", "late"),), "still known closed"
    assert w.result("c7", "s7") == (), "a declared call's late result is no finding"
    w.reset()
    assert w.result("x", "s5") == (), "a new turn: s5 is a step not yet seen, and waits"
