"""guardset: merge rules, fail-closed guards, the chain ring, and the swapping assembly."""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections.abc import Awaitable, Callable

import anyio
import anyio.lowlevel
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from yagent.kernel.judge import guardset, invoke, toolfail
from yagent.kernel.judge.guardset import Guard, Set

CALL = invoke.Call("some_tool", {"x": 1}, call_id="c1")

Check = Callable[[invoke.Call], Awaitable[invoke.Verdict]]


def returning(verdict: invoke.Verdict) -> Check:
    async def check(call: invoke.Call) -> invoke.Verdict:
        return verdict

    return check


def allow(name: str, rank: int = 0) -> Guard:
    return Guard(name, rank, returning(invoke.Verdict.allow()))


def deny(name: str, rank: int, *, retryable: bool, reason: str = "") -> Guard:
    kind = toolfail.Kind.RATE_LIMITED if retryable else toolfail.Kind.PERMISSION
    verdict = invoke.Verdict.deny(reason or f"{name} says no", kind=kind, retryable=retryable)
    return Guard(name, rank, returning(verdict))


def prompt(name: str, rank: int = 0) -> Guard:
    return Guard(name, rank, returning(invoke.Verdict.prompt(f"{name} wants a person")))


# --- Set ---------------------------------------------------------------------------------------


def test_set_refuses_empty_and_duplicates() -> None:
    with pytest.raises(guardset.EmptySetError):
        Set([])
    with pytest.raises(guardset.DuplicateGuardError, match="'a'"):
        Set.of(allow("a", 1), allow("a", 2))
    with pytest.raises(guardset.GuardsetError):
        Guard("", 0, returning(invoke.Verdict.allow()))


def test_set_orders_by_rank_then_name_and_looks_up() -> None:
    guards = Set.of(allow("zeta", 1), allow("beta", 2), allow("alpha", 2), allow("omega", 0))
    assert guards.names == ("omega", "zeta", "alpha", "beta")
    assert len(guards) == 4
    assert [g.name for g in guards] == list(guards.names)
    assert "zeta" in guards
    assert "nope" not in guards
    assert guards.get("alpha").rank == 2
    with pytest.raises(guardset.UnknownGuardError):
        guards.get("nope")


def test_without_refuses_unknown_names_and_revoking_everything() -> None:
    guards = Set([allow("a"), allow("b")], generation=7)
    fewer = guards.without("a")
    assert fewer.names == ("b",)
    assert fewer.generation == 7
    assert guards.names == ("a", "b"), "the original set is not modified"
    with pytest.raises(guardset.UnknownGuardError, match="typo"):
        guards.without("typo")
    with pytest.raises(guardset.EmptySetError, match="breach"):
        guards.without("a", "b")


def test_with_guards_adds_and_replaces() -> None:
    guards = Set.of(allow("a", 1), allow("b", 2))
    replaced = guards.with_guards(deny("a", 5, retryable=False), allow("c", 0))
    assert replaced.names == ("c", "b", "a")
    assert replaced.get("a").rank == 5


# --- evaluate / merge --------------------------------------------------------------------------


@pytest.mark.anyio
async def test_all_allow_is_allow() -> None:
    outcome = await Set.of(allow("a"), allow("b")).evaluate(CALL)
    assert outcome.allowed
    assert outcome.verdict.decision is invoke.Decision.ALLOW
    assert outcome.denials == ()
    assert outcome.blocking is None
    assert [v.stage for v in outcome.verdicts] == ["a", "b"]


@pytest.mark.anyio
async def test_every_guard_is_asked_even_after_a_denial() -> None:
    asked: list[str] = []

    def recording(name: str, verdict: invoke.Verdict) -> Check:
        async def check(call: invoke.Call) -> invoke.Verdict:
            asked.append(name)
            return verdict

        return check

    guards = Set.of(
        Guard("first", 0, recording("first", invoke.Verdict.deny("no"))),
        Guard("second", 1, recording("second", invoke.Verdict.allow())),
        Guard("third", 2, recording("third", invoke.Verdict.deny("also no"))),
    )
    outcome = await guards.evaluate(CALL)
    assert sorted(asked) == ["first", "second", "third"]
    assert [d.stage for d in outcome.denials] == ["first", "third"]


@pytest.mark.anyio
async def test_single_denial_passes_through_its_reason_and_kind() -> None:
    outcome = await Set.of(
        allow("a", 0), deny("b", 1, retryable=True, reason="slow down")
    ).evaluate(CALL)
    assert outcome.verdict.decision is invoke.Decision.DENY
    assert outcome.verdict.reason == "slow down"
    assert outcome.verdict.kind is toolfail.Kind.RATE_LIMITED
    assert outcome.verdict.retryable
    assert outcome.verdict.stage == guardset.STAGE_NAME
    assert outcome.blocking is not None
    assert outcome.blocking.stage == "b"


@pytest.mark.anyio
async def test_denials_are_ordered_by_rank_not_by_finishing_order() -> None:
    low_done = anyio.Event()

    async def late(call: invoke.Call) -> invoke.Verdict:
        await low_done.wait()  # the most important guard answers last
        return invoke.Verdict.deny("late but important", retryable=False)

    async def early(call: invoke.Call) -> invoke.Verdict:
        low_done.set()
        return invoke.Verdict.deny("early", kind=toolfail.Kind.CONFLICT)

    guards = Set.of(
        Guard("zz-early", 9, early), Guard("aa-late", 1, late), deny("mid", 5, retryable=True)
    )
    with anyio.fail_after(10):
        outcome = await guards.evaluate(CALL)
    assert [d.stage for d in outcome.denials] == ["aa-late", "mid", "zz-early"]
    lines = outcome.verdict.reason.splitlines()
    assert lines[0].startswith("3 guards denied")
    assert lines[1].startswith("1. aa-late (rank 1, not retryable): late but important")
    assert lines[2].startswith("2. mid (rank 5, retryable)")
    assert lines[3].startswith("3. zz-early (rank 9")


@pytest.mark.anyio
async def test_rank_ties_break_by_name() -> None:
    outcome = await Set.of(deny("b", 1, retryable=False), deny("a", 1, retryable=False)).evaluate(
        CALL
    )
    assert [d.stage for d in outcome.denials] == ["a", "b"]
    assert outcome.blocking is not None
    assert outcome.blocking.stage == "a"


@pytest.mark.anyio
async def test_retryable_only_if_every_denial_is_and_guidance_points_at_the_blocker() -> None:
    mixed = await Set.of(
        deny("throttle", 1, retryable=True), deny("policy", 2, retryable=False)
    ).evaluate(CALL)
    assert not mixed.verdict.retryable
    assert mixed.blocking is not None
    assert mixed.blocking.stage == "policy", "the first non-retryable blocks, not the first"
    assert mixed.verdict.kind is toolfail.Kind.PERMISSION
    last = mixed.verdict.reason.splitlines()[-1]
    assert last.startswith("What blocks this call: policy.")
    assert toolfail.guidance(toolfail.Kind.PERMISSION) in last

    all_retryable = await Set.of(
        deny("second", 2, retryable=True), deny("first", 1, retryable=True)
    ).evaluate(CALL)
    assert all_retryable.verdict.retryable
    assert all_retryable.blocking is not None
    assert all_retryable.blocking.stage == "first"
    assert all_retryable.verdict.kind is toolfail.Kind.RATE_LIMITED


@pytest.mark.anyio
async def test_prompt_among_allows_is_prompt_and_deny_beats_prompt() -> None:
    one = await Set.of(allow("a"), prompt("ask", 1)).evaluate(CALL)
    assert one.verdict.decision is invoke.Decision.PROMPT
    assert one.verdict.reason == "ask wants a person"
    assert one.prompts[0].stage == "ask"

    two = await Set.of(prompt("p2", 2), prompt("p1", 1), allow("a")).evaluate(CALL)
    assert two.verdict.decision is invoke.Decision.PROMPT
    assert two.verdict.reason.splitlines() == [
        "2 guards ask for approval:",
        "- p1: p1 wants a person",
        "- p2: p2 wants a person",
    ]

    denied = await Set.of(prompt("ask", 0), deny("no", 5, retryable=True)).evaluate(CALL)
    assert denied.verdict.decision is invoke.Decision.DENY


@pytest.mark.anyio
async def test_a_guard_that_raises_is_an_internal_denial_with_the_exception_chained() -> None:
    boom = RuntimeError("disk on fire")

    async def broken(call: invoke.Call) -> invoke.Verdict:
        raise boom

    outcome = await Set.of(allow("fine", 0), Guard("broken", 1, broken)).evaluate(CALL)
    assert outcome.verdict.decision is invoke.Decision.DENY
    assert outcome.verdict.kind is toolfail.Kind.INTERNAL
    assert not outcome.verdict.retryable
    assert outcome.verdict.cause is boom
    assert "disk on fire" in outcome.verdict.reason


@pytest.mark.anyio
async def test_the_cause_survives_when_another_denial_blocks() -> None:
    boom = ValueError("bad")

    async def broken(call: invoke.Call) -> invoke.Verdict:
        raise boom

    outcome = await Set.of(deny("first", 0, retryable=False), Guard("broken", 1, broken)).evaluate(
        CALL
    )
    assert outcome.blocking is not None
    assert outcome.blocking.stage == "first"
    assert outcome.verdict.cause is boom


@pytest.mark.anyio
async def test_a_guard_returning_a_non_verdict_is_an_internal_denial() -> None:
    async def sloppy(call: invoke.Call) -> invoke.Verdict:
        return True  # type: ignore[return-value]

    outcome = await Set.of(Guard("sloppy", 0, sloppy)).evaluate(CALL)
    assert outcome.verdict.decision is invoke.Decision.DENY
    assert outcome.verdict.kind is toolfail.Kind.INTERNAL
    assert "not a Verdict" in outcome.verdict.reason


@pytest.mark.anyio
async def test_cancellation_propagates_and_is_not_a_verdict() -> None:
    result: list[guardset.Outcome] = []
    with anyio.CancelScope() as scope:

        async def cancelling(call: invoke.Call) -> invoke.Verdict:
            scope.cancel()
            await anyio.sleep_forever()
            raise AssertionError("unreachable")

        result.append(await Set.of(Guard("c", 0, cancelling), allow("a", 1)).evaluate(CALL))
    assert scope.cancelled_caught
    assert result == []


def test_merge_requires_one_verdict_per_guard() -> None:
    with pytest.raises(guardset.GuardsetError, match="one verdict per guard"):
        guardset.merge([allow("a")], [])


def test_merge_defaults_a_kindless_denial_to_permission() -> None:
    bare = invoke.Verdict(invoke.Decision.DENY, "no kind")
    outcome = guardset.merge([allow("a")], [bare], generation=3)
    assert outcome.verdict.kind is toolfail.Kind.PERMISSION
    assert outcome.generation == 3


# --- stage adapter -----------------------------------------------------------------------------


@pytest.mark.anyio
async def test_the_set_is_one_ring_of_the_chain() -> None:
    seen: list[str] = []

    async def after(call: invoke.Call) -> invoke.Verdict:
        seen.append("after")
        return invoke.Verdict.allow()

    guards = Set.of(deny("a", 0, retryable=False), deny("b", 1, retryable=False))
    chain = invoke.Chain([guardset.stage(guards, name="guards"), invoke.FuncStage("after", after)])
    judgement = await chain.judge(CALL)
    assert len(judgement.trace) == 1
    assert judgement.verdict.stage == "guards"
    assert judgement.verdict.reason.startswith("2 guards denied")
    assert seen == []

    executed: list[invoke.Call] = []

    async def execute(call: invoke.Call) -> str:
        executed.append(call)
        return "ran"

    ok = invoke.Chain([guardset.stage(Set.of(allow("a")))])
    outcome = await ok.invoke(CALL, execute)
    assert outcome.executed
    assert outcome.result == "ran"
    assert outcome.judgement.trace[0].stage == guardset.STAGE_NAME


def test_stage_refuses_other_sources() -> None:
    with pytest.raises(guardset.GuardsetError):
        guardset.stage([allow("a")])  # type: ignore[arg-type]


# --- Assembly ----------------------------------------------------------------------------------


def test_swap_func_stamps_monotonic_generations_into_the_set() -> None:
    assembly = guardset.Assembly(Set.of(allow("a"), allow("b"), allow("c")))
    assert assembly.generation == 0
    first = assembly.swap_func(lambda s: s.without("a"))
    assert first.changed
    assert first.generation == 1
    assert first.old.generation == 0
    assert assembly.snapshot() is first.new
    assert assembly.snapshot().generation == assembly.generation == 1
    second = assembly.swap(Set.of(allow("z")))
    assert second.generation == 2
    assert assembly.snapshot().names == ("z",)
    assert first.new.names == ("b", "c"), "installed sets are never modified"


def test_a_mutate_that_returns_the_current_set_commits_nothing() -> None:
    assembly = guardset.Assembly(Set.of(allow("a")))
    calls: list[guardset.SwapRecord] = []
    assembly.subscribe(calls.append)
    record = assembly.swap_func(lambda s: s)
    assert not record.changed
    assert record.generation == 0
    assert assembly.generation == 0
    assert calls == []


def test_revoke_all_is_refused_and_nothing_changes() -> None:
    assembly = guardset.Assembly(Set.of(allow("a"), allow("b")))
    with pytest.raises(guardset.EmptySetError):
        assembly.swap_func(lambda s: s.without(*s.names))
    with pytest.raises(guardset.EmptySetError):
        assembly.swap(Set([]))
    assert assembly.snapshot().names == ("a", "b")
    assert assembly.generation == 0


def test_swap_func_refuses_non_sets_and_bad_arguments() -> None:
    with pytest.raises(guardset.GuardsetError):
        guardset.Assembly([allow("a")])  # type: ignore[arg-type]
    assembly = guardset.Assembly(Set.of(allow("a")))
    with pytest.raises(guardset.GuardsetError, match="NoneType"):
        assembly.swap_func(lambda s: None)  # type: ignore[arg-type,return-value]
    with pytest.raises(ValueError, match="max_attempts"):
        assembly.swap_func(lambda s: s, max_attempts=0)
    assert assembly.generation == 0


def test_a_lost_race_reruns_mutate_on_the_newer_set() -> None:
    assembly = guardset.Assembly(Set.of(allow("keep"), allow("x"), allow("y")))
    seen: list[tuple[str, ...]] = []

    def revoke_y(current: Set) -> Set:
        seen.append(current.names)
        if len(seen) == 1:  # another revoker lands between our read and our commit
            assembly.swap_func(lambda s: s.without("x"))
        return current.without("y")

    record = assembly.swap_func(revoke_y)
    assert record.attempts == 2
    assert seen == [("keep", "x", "y"), ("keep", "y")]
    assert assembly.snapshot().names == ("keep",), "the other revocation was not undone"
    assert assembly.generation == 2


def test_endless_contention_fails_loudly_without_committing() -> None:
    assembly = guardset.Assembly(Set.of(allow("a"), allow("b")))
    attempts: list[int] = []

    def always_overtaken(current: Set) -> Set:
        attempts.append(1)
        assembly.swap(Set.of(allow("a"), allow("b"), allow("other")))  # a fresh set each time
        return current.without("a")

    with pytest.raises(guardset.ContentionError):
        assembly.swap_func(always_overtaken, max_attempts=3)
    assert len(attempts) == 3
    assert assembly.snapshot().names == ("a", "b", "other")
    assert assembly.generation == 3


def _revoke_each_from_threads(assembly: guardset.Assembly, names: list[str]) -> list[int]:
    barrier = threading.Barrier(len(names))
    generations: list[int] = []
    errors: list[BaseException] = []
    local = threading.local()

    def revoke(name: str) -> None:
        def mutate(current: Set) -> Set:
            if not getattr(local, "waited", False):
                local.waited = True
                barrier.wait()  # every thread has read the same set before anyone commits
            return current.without(name)

        try:
            generations.append(assembly.swap_func(mutate).generation)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=revoke, args=(n,)) for n in names]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    return generations


def test_concurrent_revocations_from_threads_never_lose_an_update() -> None:
    names = [f"g{i:02d}" for i in range(24)]
    assembly = guardset.Assembly(Set([allow("keeper"), *(allow(n) for n in names)]))
    generations = _revoke_each_from_threads(assembly, names)
    assert assembly.snapshot().names == ("keeper",)
    assert sorted(generations) == list(range(1, len(names) + 1))
    assert assembly.generation == len(names)


@pytest.mark.anyio
async def test_concurrent_revocations_from_tasks_and_threads() -> None:
    in_thread = [f"t{i}" for i in range(8)]
    in_task = [f"k{i}" for i in range(8)]
    assembly = guardset.Assembly(Set([allow("keeper"), *(allow(n) for n in in_thread + in_task)]))

    async def revoke_in_task(name: str) -> None:
        await anyio.lowlevel.checkpoint()
        assembly.swap_func(lambda s: s.without(name))

    async def revoke_in_thread(name: str) -> None:
        await anyio.to_thread.run_sync(lambda: assembly.swap_func(lambda s: s.without(name)))

    async with anyio.create_task_group() as group:
        for a, b in zip(in_thread, in_task, strict=True):
            group.start_soon(revoke_in_thread, a)
            group.start_soon(revoke_in_task, b)
    assert assembly.snapshot().names == ("keeper",)
    assert assembly.generation == 16


def test_subscribers_are_told_and_a_raising_one_does_not_fail_the_swap(
    caplog: pytest.LogCaptureFixture,
) -> None:
    assembly = guardset.Assembly(Set.of(allow("a"), allow("b")))
    told: list[int] = []
    boom = RuntimeError("listener broke")

    def broken(record: guardset.SwapRecord) -> None:
        raise boom

    bad = assembly.subscribe(broken)
    good = assembly.subscribe(lambda r: told.append(r.generation))
    with caplog.at_level(logging.ERROR, logger="yagent.kernel.judge.guardset"):
        record = assembly.swap_func(lambda s: s.without("a"))
    assert record.changed
    assert assembly.snapshot().names == ("b",)
    assert told == [1], "a failing subscriber does not stop the others"
    assert record.subscriber_failures == (guardset.SubscriberFailure(bad, boom),)
    assert assembly.subscriber_failures == 1
    assert "generation 1" in caplog.text

    assert assembly.unsubscribe(bad)
    assert not assembly.unsubscribe(bad)
    clean = assembly.swap(Set.of(allow("c")))
    assert clean.subscriber_failures == ()
    assert told == [1, 2]
    assert assembly.unsubscribe(good)
    assembly.swap(Set.of(allow("d")))
    assert told == [1, 2]


def test_a_subscriber_may_unsubscribe_itself_while_being_told() -> None:
    assembly = guardset.Assembly(Set.of(allow("a")))
    told: list[int] = []
    token = 0

    def once(record: guardset.SwapRecord) -> None:
        told.append(record.generation)
        assembly.unsubscribe(token)

    token = assembly.subscribe(once)
    assembly.swap(Set.of(allow("b")))
    assembly.swap(Set.of(allow("c")))
    assert told == [1]


@pytest.mark.anyio
async def test_an_in_flight_evaluation_keeps_the_set_it_started_with() -> None:
    entered = anyio.Event()
    release = anyio.Event()

    async def slow_allow(call: invoke.Call) -> invoke.Verdict:
        entered.set()
        await release.wait()
        return invoke.Verdict.allow()

    assembly = guardset.Assembly(Set.of(Guard("slow", 0, slow_allow)))
    ring = guardset.stage(assembly)
    outcomes: list[guardset.Outcome] = []

    async def judge_in_flight() -> None:
        outcomes.append(await ring.evaluate(CALL))

    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:
            group.start_soon(judge_in_flight)
            await entered.wait()
            assembly.swap(Set.of(deny("revoked-everything", 0, retryable=False)))
            release.set()
    assert outcomes[0].allowed
    assert outcomes[0].generation == 0

    after = await ring.judge(CALL)
    assert after.decision is invoke.Decision.DENY
    assert after.stage == guardset.STAGE_NAME
    assert (await ring.evaluate(CALL)).generation == 1


@pytest.mark.anyio
async def test_one_at_a_time_asks_in_set_order_and_merges_the_same() -> None:
    asked: list[str] = []

    def recording(name: str, verdict: invoke.Verdict) -> Check:
        async def check(call: invoke.Call) -> invoke.Verdict:
            asked.append(name)
            return verdict

        return check

    def boom(call: invoke.Call) -> Awaitable[invoke.Verdict]:
        raise RuntimeError("cannot judge")

    guards = Set.of(
        Guard("c", 2, recording("c", invoke.Verdict.deny("also no"))),
        Guard("a", 0, recording("a", invoke.Verdict.deny("no"))),
        Guard("b", 1, recording("b", invoke.Verdict.prompt("ask"))),
        Guard("d", 3, boom),
    )
    one_by_one = await guards.evaluate(CALL, concurrently=False)
    assert asked == ["a", "b", "c"]
    together = await guards.evaluate(CALL)
    assert one_by_one.verdict.reason == together.verdict.reason
    assert [d.stage for d in one_by_one.denials] == ["a", "c", "d"]
    assert one_by_one.denials[-1].kind is toolfail.Kind.INTERNAL  # fail closed, one by one too


def test_merge_attributes_each_verdict_to_its_guard_and_copies_only_to_rename() -> None:
    guards = Set.of(
        allow("b", 1),
        Guard("a", 0, returning(invoke.Verdict.allow("a"))),
        prompt("c", 2),
    ).guards
    named = invoke.Verdict.allow("a")
    unnamed = invoke.Verdict.allow()
    asking = invoke.Verdict.prompt("c wants a person", stage="elsewhere")
    outcome = guardset.merge(guards, [named, unnamed, asking])
    assert [v.stage for v in outcome.verdicts] == ["a", "b", "c"]
    assert outcome.verdicts[0] is named  # already its guard's: not copied (the hot path)
    assert outcome.verdicts[1] == invoke.Verdict.allow("b")
    assert outcome.verdicts[2] == invoke.Verdict.prompt("c wants a person", stage="c")
    assert outcome.prompts == (outcome.verdicts[2],)
    assert outcome.verdict.decision is invoke.Decision.PROMPT


_SPOKEN = st.sampled_from(
    [
        invoke.Verdict.allow(),
        invoke.Verdict.allow("other"),
        invoke.Verdict(invoke.Decision.ALLOW, "allowed, and said why"),
        invoke.Verdict.prompt("ask"),
        invoke.Verdict.deny("no", kind=toolfail.Kind.PERMISSION),
        invoke.Verdict.deny("later", kind=toolfail.Kind.RATE_LIMITED, retryable=True),
    ]
)


@settings(max_examples=200, deadline=None)
@given(spoken=st.lists(_SPOKEN, min_size=1, max_size=5), named=st.lists(st.booleans(), max_size=5))
def test_evaluating_one_at_a_time_is_merge_over_what_was_said(
    spoken: list[invoke.Verdict], named: list[bool]
) -> None:
    names = [f"g{i}" for i in range(len(spoken))]
    said = [
        dataclasses.replace(v, stage=n) if i < len(named) and named[i] else v
        for i, (n, v) in enumerate(zip(names, spoken, strict=True))
    ]
    guards = Set(
        Guard(n, len(said) - i, returning(v))
        for i, (n, v) in enumerate(zip(names, said, strict=True))
    )
    by_name = dict(zip(names, said, strict=True))
    want = guardset.merge(guards.guards, [by_name[g.name] for g in guards.guards])
    got = anyio.run(lambda: guards.evaluate(CALL, concurrently=False))
    assert got == want
    assert got.verdict.reason == want.verdict.reason
