"""statemachine: pure conditional transitions, typed refusals, terminal states, a checked table."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from yagent.kernel.durable.statemachine import (
    AmbiguousTransitionError,
    DefinitionError,
    GuardFailedError,
    GuardRejectedError,
    IllegalTransitionError,
    Machine,
    TerminalStateError,
    Transition,
    UnknownStateError,
)


@dataclass(frozen=True)
class Ctx:
    attempts: int = 0
    approved: bool = False


def retry_left(ctx: Ctx) -> bool:
    return ctx.attempts < 3


def exhausted(ctx: Ctx) -> bool:
    return ctx.attempts >= 3


STEP: Machine[str, str] = Machine(
    [
        Transition("pending", "start", "running"),
        Transition("running", "succeed", "succeeded"),
        Transition("running", "fail", "pending", retry_left, name="retry"),
        Transition("running", "fail", "failed", exhausted, name="give up"),
        Transition("pending", "cancel", "cancelled"),
        Transition("running", "cancel", "cancelled", lambda c: c.approved, name="approved cancel"),
    ],
    initial="pending",
    terminal={"succeeded", "failed", "cancelled"},
)


def test_fire_follows_the_table() -> None:
    assert STEP.fire("pending", "start") == "running"
    assert STEP.fire("running", "succeed") == "succeeded"
    assert STEP.initial == "pending"
    assert STEP.states == {"pending", "running", "succeeded", "failed", "cancelled"}
    assert STEP.terminal == {"succeeded", "failed", "cancelled"}


def test_guards_choose_between_conditional_transitions() -> None:
    assert STEP.fire("running", "fail", Ctx(attempts=1)) == "pending"
    assert STEP.fire("running", "fail", Ctx(attempts=3)) == "failed"
    assert STEP.transition("running", "fail", Ctx(attempts=3)).name == "give up"


def test_an_event_the_table_does_not_have_is_illegal() -> None:
    with pytest.raises(IllegalTransitionError, match="the table has none") as err:
        STEP.fire("pending", "succeed")
    assert (err.value.state, err.value.event) == ("pending", "succeed")
    assert type(err.value) is IllegalTransitionError


def test_every_guard_saying_no_is_a_rejection() -> None:
    with pytest.raises(GuardRejectedError):
        STEP.fire("running", "cancel", Ctx(approved=False))
    assert STEP.fire("running", "cancel", Ctx(approved=True)) == "cancelled"


@pytest.mark.parametrize("state", ["succeeded", "failed", "cancelled"])
def test_nothing_leaves_a_terminal_state(state: str) -> None:
    assert STEP.is_terminal(state)
    with pytest.raises(TerminalStateError):
        STEP.fire(state, "start")
    assert STEP.allowed(state, Ctx()) == ()


def test_unknown_states_are_refused_not_treated_as_anything() -> None:
    with pytest.raises(UnknownStateError):
        STEP.fire("paused", "start")
    with pytest.raises(UnknownStateError):
        STEP.is_terminal("paused")
    with pytest.raises(UnknownStateError):
        STEP.allowed("paused")


def test_a_guard_that_raises_or_returns_a_non_bool_fails_closed() -> None:
    def broken(ctx: object) -> bool:
        raise KeyError("missing")

    async def coroutine_guard(ctx: object) -> bool:
        return False

    guards: list[Any] = [broken, coroutine_guard, lambda c: 1, lambda c: None]
    for guard in guards:
        machine: Machine[str, str] = Machine(
            [Transition("a", "go", "b", guard)], initial="a", terminal={"b"}
        )
        with pytest.raises(GuardFailedError):
            machine.fire("a", "go")
        assert not machine.can("a", "go")
        assert machine.allowed("a") == ()


def test_a_raising_guard_keeps_its_cause() -> None:
    def broken(ctx: object) -> bool:
        raise KeyError("missing")

    machine: Machine[str, str] = Machine(
        [Transition("a", "go", "b", broken)], initial="a", terminal=()
    )
    with pytest.raises(GuardFailedError) as err:
        machine.fire("a", "go")
    assert isinstance(err.value.__cause__, KeyError)


def test_two_passing_guards_are_ambiguous_whatever_the_order() -> None:
    always = [
        Transition("a", "go", "b", lambda c: True, "one"),
        Transition("a", "go", "c", lambda c: True, "two"),
    ]
    for table in (always, always[::-1]):
        machine: Machine[str, str] = Machine(table, initial="a", terminal={"b", "c"})
        with pytest.raises(AmbiguousTransitionError, match="one"):
            machine.fire("a", "go")


def test_can_and_allowed_answer_without_raising() -> None:
    assert STEP.can("pending", "start")
    assert not STEP.can("pending", "succeed")
    assert STEP.allowed("pending") == ("start", "cancel")
    assert STEP.allowed("running", Ctx(attempts=0)) == ("succeed", "fail")
    assert STEP.allowed("running", Ctx(attempts=0, approved=True)) == ("succeed", "fail", "cancel")


@pytest.mark.parametrize(
    ("table", "kwargs", "match"),
    [
        (
            [Transition("done", "go", "a")],
            {"initial": "a", "terminal": {"done"}},
            "leaves terminal",
        ),
        (
            [Transition("a", "go", "b"), Transition("a", "go", "c")],
            {"initial": "a", "terminal": ()},
            "needs a guard",
        ),
        (
            [Transition("a", "go", "b", retry_left), Transition("a", "go", "c")],
            {"initial": "a", "terminal": ()},
            "needs a guard",
        ),
        (
            [Transition("a", "go", "b", retry_left), Transition("a", "go", "b", retry_left)],
            {"initial": "a", "terminal": ()},
            "duplicate",
        ),
        ([], {"initial": "a", "terminal": {"a"}}, "initial state"),
        (["a -> b"], {"initial": "a", "terminal": ()}, "expected a Transition"),
    ],
)
def test_invalid_tables_are_refused_when_built(
    table: list[object], kwargs: dict[str, object], match: str
) -> None:
    with pytest.raises(DefinitionError, match=match):
        Machine(table, **kwargs)  # type: ignore[arg-type]


def test_states_may_be_declared_without_transitions() -> None:
    machine: Machine[str, str] = Machine([], initial="idle", terminal=(), states={"spare"})
    assert machine.states == {"idle", "spare"}
    assert machine.allowed("spare") == ()


def test_labels_name_the_transition() -> None:
    assert Transition("a", "go", "b").label() == "'a' --'go'--> 'b'"
    assert Transition("a", "go", "b", name="named").label() == "named"


@given(
    st.lists(st.sampled_from(["start", "succeed", "fail", "cancel"]), max_size=20),
    st.integers(0, 5),
)
def test_fire_is_pure_and_only_reaches_known_states(events: list[str], attempts: int) -> None:
    state = STEP.initial
    ctx = Ctx(attempts=attempts)
    for event in events:
        if STEP.can(state, event, ctx):
            nxt = STEP.fire(state, event, ctx)
            assert nxt == STEP.fire(state, event, ctx)  # same inputs, same answer
            assert nxt in STEP.states
            state = nxt
        else:
            with pytest.raises(IllegalTransitionError):
                STEP.fire(state, event, ctx)
    if STEP.is_terminal(state):
        assert STEP.allowed(state, ctx) == ()
