"""The pure resume decision: holes, declared dependencies, isolation, terminal runs, mismatches."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from yagent.kernel.durable.checkpoint import (
    PlanError,
    ResumeAction,
    RunProgress,
    RunState,
    SeqGate,
    StaleSeqError,
    StepDef,
    StepRecord,
    StepStatus,
    decide,
    digest,
    validate_plan,
)

S = StepStatus


def rec(step_id: str, status: StepStatus = S.COMPLETED) -> StepRecord:
    return StepRecord(step_id, status, digest(step_id.encode()) if status is S.COMPLETED else "")


def snap(*records: StepRecord, state: RunState = RunState.ACTIVE, run: str = "r1") -> RunProgress:
    return RunProgress(run, 4, state, records)


PLAIN = [StepDef("a"), StepDef("b"), StepDef("c")]


def test_no_snapshot_starts_the_whole_plan() -> None:
    got = decide("r1", PLAIN, None)
    assert (got.action, got.trusted, got.todo, got.seq) == (
        ResumeAction.START,
        (),
        ("a", "b", "c"),
        0,
    )


def test_a_complete_prefix_is_trusted_and_the_rest_is_todo() -> None:
    got = decide("r1", PLAIN, snap(rec("a"), rec("b"), rec("c", S.PENDING)))
    assert (got.action, got.trusted, got.todo) == (ResumeAction.CONTINUE, ("a", "b"), ("c",))
    assert got.distrusted == ()
    assert got.seq == 4


def test_a_completion_after_a_hole_is_not_trusted() -> None:
    got = decide("r1", PLAIN, snap(rec("a"), rec("c")))
    assert got.trusted == ("a",)
    assert got.todo == ("b", "c")
    assert got.distrusted == ("c",)


def test_a_hole_at_the_start_distrusts_everything_after_it() -> None:
    got = decide("r1", PLAIN, snap(rec("a", S.FAILED), rec("b"), rec("c")))
    assert got.trusted == ()
    assert got.todo == ("a", "b", "c")
    assert got.distrusted == ("b", "c")


def test_declared_dependencies_trust_an_out_of_order_completion() -> None:
    plan = [StepDef("a"), StepDef("b", ("a",)), StepDef("c", ("a",)), StepDef("d", ("a",))]
    got = decide("r1", plan, snap(rec("a"), rec("b", S.RUNNING), rec("c")))
    assert got.trusted == ("a", "c")
    assert got.todo == ("b", "d")
    assert got.interrupted == ("b",)
    assert got.distrusted == ()


def test_a_declared_dependency_that_is_not_trusted_distrusts_the_dependant() -> None:
    plan = [StepDef("a"), StepDef("b"), StepDef("c", ("b",)), StepDef("d", ("c",))]
    got = decide("r1", plan, snap(rec("a"), rec("c"), rec("d")))
    assert got.trusted == ("a",)
    assert got.distrusted == ("c", "d")
    # every dependency must be trusted, not just one of them
    plan2 = [StepDef("a"), StepDef("b"), StepDef("c", ("a", "b"))]
    got2 = decide("r1", plan2, snap(rec("a"), rec("c")))
    assert got2.trusted == ("a",)
    assert got2.todo == ("b", "c")


def test_a_dependency_trusted_only_through_its_own_declaration_counts() -> None:
    plan = [StepDef("a"), StepDef("b"), StepDef("c", ("a",)), StepDef("d", ("c",))]
    got = decide("r1", plan, snap(rec("a"), rec("c"), rec("d")))
    assert got.trusted == ("a", "c", "d")
    assert got.todo == ("b",)


def test_an_isolated_step_is_trusted_on_its_own_completion() -> None:
    plan = [StepDef("a"), StepDef("b"), StepDef("c", isolated=True)]
    got = decide("r1", plan, snap(rec("c")))
    assert got.trusted == ("c",)
    assert got.todo == ("a", "b")
    pending = decide("r1", plan, snap(rec("c", S.PENDING)))
    assert pending.trusted == ()


def test_zero_value_steps_keep_the_strict_prefix_after_declared_ones() -> None:
    plan = [StepDef("a"), StepDef("b", ("a",)), StepDef("c", ("a",)), StepDef("z")]
    got = decide("r1", plan, snap(rec("a"), rec("c"), rec("z")))
    assert got.trusted == ("a", "c")  # c by its declaration; z needs b too (the whole prefix)
    assert got.distrusted == ("z",)
    every = decide("r1", plan, snap(rec("a"), rec("b"), rec("c"), rec("z")))
    assert every.trusted == ("a", "b", "c", "z")
    assert every.todo == ()
    assert every.action is ResumeAction.CONTINUE


@pytest.mark.parametrize("state", [RunState.SUCCEEDED, RunState.FAILED, RunState.CANCELLED])
def test_a_terminal_run_is_never_reopened_automatically(state: RunState) -> None:
    got = decide("r1", PLAIN, snap(rec("a"), rec("b", S.FAILED), state=state))
    assert got.action is ResumeAction.TERMINAL
    assert got.todo == ()
    assert got.trusted == ("a",)
    assert str(state) in got.reason
    reopened = decide("r1", PLAIN, snap(rec("a"), rec("b", S.FAILED)))
    assert reopened.action is ResumeAction.CONTINUE
    assert reopened.todo == ("b", "c")


def test_a_snapshot_of_another_run_is_a_mismatch_that_trusts_nothing() -> None:
    got = decide("r1", PLAIN, snap(rec("a"), run="r2"))
    assert (got.action, got.trusted, got.todo) == (ResumeAction.MISMATCH, (), ())
    assert "r2" in got.reason


def test_steps_the_plan_does_not_know_are_a_mismatch() -> None:
    got = decide("r1", PLAIN, snap(rec("a"), rec("zz"), rec("b")))
    assert (got.action, got.trusted, got.todo, got.unknown) == (
        ResumeAction.MISMATCH,
        (),
        (),
        ("zz",),
    )


def test_failed_and_pending_steps_are_todo_not_trusted() -> None:
    got = decide("r1", PLAIN, snap(rec("a", S.FAILED), rec("b", S.PENDING)))
    assert got.trusted == ()
    assert got.todo == ("a", "b", "c")
    assert got.interrupted == ()


@pytest.mark.parametrize(
    "plan",
    [
        [StepDef("a"), StepDef("a")],
        [StepDef("a", ("b",)), StepDef("b")],
        [StepDef("a", ("ghost",))],
        ["a"],
    ],
)
def test_malformed_plans_are_refused(plan: list[object]) -> None:
    with pytest.raises(PlanError):
        validate_plan(plan)  # type: ignore[arg-type]
    with pytest.raises(PlanError):
        decide("r1", plan, None)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "kwargs",
    [
        {"depends_on": ("x",), "isolated": True},
        {"depends_on": ("s",)},
        {"depends_on": ("x", "x")},
        {"depends_on": "x"},
        {"depends_on": 3},
        {"isolated": 1},
        {"depends_on": ("",)},
    ],
)
def test_contradictory_or_malformed_step_declarations_are_refused(
    kwargs: dict[str, object],
) -> None:
    with pytest.raises(ValueError, match="checkpoint"):
        StepDef("s", **kwargs)  # type: ignore[arg-type]


def test_depends_on_accepts_any_sequence_and_stores_a_tuple() -> None:
    assert StepDef("s", ["a", "b"]).depends_on == ("a", "b")  # type: ignore[arg-type]


def test_seq_gate_admits_only_increasing_nonzero_seqs() -> None:
    gate = SeqGate("r1")
    with pytest.raises(StaleSeqError, match="seq 0"):
        gate.admit(0)
    gate.admit(1)
    gate.admit(5)
    for stale in (5, 4, 0):
        with pytest.raises(StaleSeqError) as err:
            gate.admit(stale)
        assert err.value.stored == 5
    assert gate.last == 5
    assert SeqGate("r1", last=9).last == 9
    with pytest.raises(ValueError, match="last seq"):
        SeqGate("r1", last=-1)


# Properties over random plans and snapshots --------------------------------------------------


@st.composite
def plans_and_snapshots(draw: st.DrawFn) -> tuple[list[StepDef], RunProgress]:
    n = draw(st.integers(1, 8))
    plan: list[StepDef] = []
    for i in range(n):
        kind = draw(st.sampled_from(["zero", "deps", "isolated"]))
        if kind == "isolated":
            plan.append(StepDef(f"s{i}", isolated=True))
        elif kind == "deps" and i > 0:
            deps = draw(st.sets(st.integers(0, i - 1), min_size=1, max_size=i))
            plan.append(StepDef(f"s{i}", tuple(f"s{d}" for d in sorted(deps))))
        else:
            plan.append(StepDef(f"s{i}"))
    statuses = draw(st.lists(st.sampled_from([*S, None]), min_size=n, max_size=n))
    records = tuple(rec(s.id, status) for s, status in zip(plan, statuses, strict=True) if status)
    return plan, snap(*records)


@given(plans_and_snapshots())
def test_trusted_steps_are_completed_and_their_declarations_hold(
    case: tuple[list[StepDef], RunProgress],
) -> None:
    plan, snapshot = case
    got = decide("r1", plan, snapshot)
    ids = [s.id for s in plan]
    assert set(got.trusted) | set(got.todo) == set(ids)
    assert not set(got.trusted) & set(got.todo)
    for i, step in enumerate(plan):
        if step.id not in got.trusted:
            continue
        record = snapshot.step(step.id)
        assert record is not None
        assert record.status is S.COMPLETED
        if step.depends_on:
            assert set(step.depends_on) <= set(got.trusted)
        elif not step.isolated:
            assert set(ids[:i]) <= set(got.trusted)


@given(plans_and_snapshots())
def test_with_zero_declarations_trust_is_exactly_the_completed_prefix(
    case: tuple[list[StepDef], RunProgress],
) -> None:
    plan, snapshot = case
    plain = [StepDef(s.id) for s in plan]
    prefix: list[str] = []
    for step in plain:
        record = snapshot.step(step.id)
        if record is None or record.status is not S.COMPLETED:
            break
        prefix.append(step.id)
    assert decide("r1", plain, snapshot).trusted == tuple(prefix)


@given(plans_and_snapshots(), st.integers(0, 7))
def test_completing_one_more_step_never_distrusts_another(
    case: tuple[list[StepDef], RunProgress], pick: int
) -> None:
    plan, snapshot = case
    target = plan[pick % len(plan)].id
    more = (*tuple(r for r in snapshot.steps if r.id != target), rec(target))
    before = set(decide("r1", plan, snapshot).trusted)
    after = set(decide("r1", plan, RunProgress("r1", 5, RunState.ACTIVE, more)).trusted)
    assert before <= after
