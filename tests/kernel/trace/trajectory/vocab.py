"""A small host vocabulary for the tests: generic event names, nothing of yagent's."""

from __future__ import annotations

from typing import Any

from yagent.kernel.trace.trajectory import Declares, Kind, Ref, RuleBook, SignalRule, Trajectory

STEP = Ref("step", ("lane", "n"))
CALL = Ref("call", ("lane", "id"))
LANE = Ref("span", ("lane",))

BOOK = RuleBook(
    {
        "think": SignalRule(
            Kind.STEP_START, STEP, LANE, name="who", scope="lane", attrs={"n": "n"}
        ),
        "thought": SignalRule(
            Kind.STEP_END,
            STEP,
            LANE,
            scope="lane",
            declares=Declares("wants", Ref("call", ("lane", "id"))),
            attrs={"model": "model", "input_tokens": "usage.in", "output_tokens": "usage.out"},
        ),
        "invoke": SignalRule(
            Kind.CALL, CALL, STEP, name="tool", scope="lane", attrs={"call_id": "id"}
        ),
        "answer": SignalRule(
            Kind.RESULT,
            CALL,
            STEP,
            name="tool",
            scope="lane",
            ok="ok",
            outcome="why",
            attrs={"call_id": "id"},
        ),
        "sub": SignalRule(
            Kind.SPAN_START, LANE, Ref("call", ("parent", "via")), name="who", scope="lane"
        ),
        "over": (
            SignalRule(Kind.TURN_END, when={"lane": ""}, attrs={"status": "status"}),
            SignalRule(Kind.SPAN_END, LANE, scope="lane", ok="ok", attrs={"status": "status"}),
        ),
    },
    ignore=("chatter",),
)


def ev(type_: str, **payload: Any) -> tuple[str, dict[str, Any]]:
    payload.setdefault("lane", "")
    return type_, payload


def feed(events: list[tuple[str, dict[str, Any]]], start: float = 100.0) -> Trajectory:
    """Feed events with a 1 s tick each (ts = start + position)."""
    t = Trajectory(BOOK)
    for i, (type_, payload) in enumerate(events):
        t.feed(type_, payload, ts=start + i, seq=i + 1)
    return t
