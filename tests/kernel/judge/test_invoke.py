"""invoke: order, first non-ALLOW stops, trace, fail closed, execute only on ALLOW."""

from __future__ import annotations

import anyio
import pytest

from yagent.kernel.judge import toolfail
from yagent.kernel.judge.invoke import Call, Chain, Decision, FuncStage, Judgement, Stage, Verdict


def recording(name: str, verdict: Verdict, seen: list[str]) -> FuncStage:
    async def judge(call: Call) -> Verdict:
        seen.append(name)
        return verdict

    return FuncStage(name, judge)


def raising(name: str, exc: Exception) -> FuncStage:
    async def judge(call: Call) -> Verdict:
        raise exc

    return FuncStage(name, judge)


CALL = Call("tool_x", {"a": 1}, call_id="c1", caller="agent", depth=1)


@pytest.mark.anyio
async def test_stages_run_in_order_and_all_allow() -> None:
    seen: list[str] = []
    chain = Chain([recording(n, Verdict.allow(), seen) for n in ("a", "b", "c")])
    judgement = await chain.judge(CALL)
    assert seen == ["a", "b", "c"]
    assert judgement.verdict.allowed
    assert [v.stage for v in judgement.trace] == ["a", "b", "c"]


@pytest.mark.anyio
async def test_first_non_allow_stops_and_is_named() -> None:
    seen: list[str] = []
    chain = Chain(
        [
            recording("a", Verdict.allow(), seen),
            recording("b", Verdict.prompt("ask first"), seen),
            recording("c", Verdict.deny("never"), seen),
        ]
    )
    judgement = await chain.judge(CALL)
    assert seen == ["a", "b"]
    assert judgement.verdict.decision is Decision.PROMPT
    assert judgement.verdict.stage == "b"
    assert judgement.verdict.kind is toolfail.Kind.NEEDS_APPROVAL
    assert [v.decision for v in judgement.trace] == [Decision.ALLOW, Decision.PROMPT]


@pytest.mark.anyio
async def test_a_stage_naming_itself_keeps_its_name() -> None:
    chain = Chain([recording("outer", Verdict.deny("x", stage="inner"), [])])
    assert (await chain.judge(CALL)).verdict.stage == "inner"


@pytest.mark.anyio
async def test_raising_stage_is_internal_deny_with_cause() -> None:
    boom = RuntimeError("boom")
    seen: list[str] = []
    chain = Chain([raising("broken", boom), recording("later", Verdict.allow(), seen)])
    judgement = await chain.judge(CALL)
    verdict = judgement.verdict
    assert verdict.decision is Decision.DENY
    assert verdict.kind is toolfail.Kind.INTERNAL
    assert verdict.cause is boom
    assert verdict.stage == "broken"
    assert not verdict.retryable
    assert "boom" in verdict.reason
    assert seen == []


@pytest.mark.anyio
async def test_stage_returning_non_verdict_is_internal_deny() -> None:
    async def bad(call: Call) -> Verdict:
        return True  # type: ignore[return-value]

    judgement = await Chain([FuncStage("bad", bad)]).judge(CALL)
    assert judgement.verdict.decision is Decision.DENY
    assert judgement.verdict.kind is toolfail.Kind.INTERNAL


@pytest.mark.anyio
async def test_cancellation_propagates_not_converted() -> None:
    async def slow(call: Call) -> Verdict:
        await anyio.sleep(10)
        return Verdict.allow()

    chain = Chain([FuncStage("slow", slow)])
    with anyio.move_on_after(0.01) as scope:
        await chain.judge(CALL)
    assert scope.cancelled_caught


@pytest.mark.anyio
async def test_invoke_executes_only_on_allow() -> None:
    executed: list[Call] = []

    async def execute(call: Call) -> str:
        executed.append(call)
        return "done"

    ok = await Chain([recording("a", Verdict.allow(), [])]).invoke(CALL, execute)
    assert ok.executed
    assert ok.result == "done"
    assert ok.verdict.allowed
    assert executed == [CALL]

    for verdict in (Verdict.prompt("ask"), Verdict.deny("no")):
        executed.clear()
        out = await Chain([recording("g", verdict, [])]).invoke(CALL, execute)
        assert not out.executed
        assert out.result is None
        assert out.verdict.decision is verdict.decision
        assert executed == []


@pytest.mark.anyio
async def test_raising_stage_never_executes() -> None:
    executed: list[Call] = []

    async def execute(call: Call) -> None:
        executed.append(call)

    out = await Chain([raising("x", ValueError("v"))]).invoke(CALL, execute)
    assert not out.executed
    assert executed == []


@pytest.mark.anyio
async def test_empty_chain_allows() -> None:
    judgement = await Chain([]).judge(CALL)
    assert isinstance(judgement, Judgement)
    assert judgement.verdict.allowed
    assert judgement.trace == ()


def test_duplicate_stage_names_refused() -> None:
    stage = recording("a", Verdict.allow(), [])
    with pytest.raises(ValueError, match="duplicate"):
        Chain([stage, stage])


@pytest.mark.anyio
async def test_with_stage_returns_new_chain() -> None:
    seen: list[str] = []
    base = Chain([recording("b", Verdict.allow(), seen)])
    extended = base.with_stage(recording("a", Verdict.allow(), seen), first=True)
    extended = extended.with_stage(recording("c", Verdict.allow(), seen))
    await extended.judge(CALL)
    assert seen == ["a", "b", "c"]
    assert len(base.stages) == 1


def test_deny_retryable_defaults_to_table() -> None:
    assert Verdict.deny("x", kind=toolfail.Kind.NOT_LOADED).retryable
    assert not Verdict.deny("x", kind=toolfail.Kind.FORBIDDEN).retryable
    assert not Verdict.deny("x", kind=toolfail.Kind.NOT_LOADED, retryable=False).retryable
    assert isinstance(FuncStage("n", recording("n", Verdict.allow(), []).fn), Stage)


@pytest.mark.anyio
async def test_approval_continues_with_the_next_stage() -> None:
    seen: list[str] = []
    asked: list[str] = []

    async def approve(call: Call, verdict: Verdict) -> bool:
        asked.append(verdict.stage)
        return True

    async def execute(call: Call) -> str:
        return "ran"

    chain = Chain(
        [
            recording("boundary", Verdict.prompt("outside the workspace"), seen),
            recording("danger", Verdict.prompt("dangerous"), seen),
            recording("hooks", Verdict.allow(), seen),
        ]
    )
    out = await chain.invoke(CALL, execute, approve=approve)
    assert out.executed
    assert out.result == "ran"
    assert asked == ["boundary", "danger"]
    assert seen == ["boundary", "danger", "hooks"]


@pytest.mark.anyio
async def test_approval_never_skips_a_later_deny() -> None:
    async def approve(call: Call, verdict: Verdict) -> bool:
        return True

    async def execute(call: Call) -> str:
        raise AssertionError("must not run")

    chain = Chain(
        [
            recording("boundary", Verdict.prompt("outside"), []),
            recording("hooks", Verdict.deny("hook says no"), []),
        ]
    )
    out = await chain.invoke(CALL, execute, approve=approve)
    assert not out.executed
    assert out.verdict.stage == "hooks"


@pytest.mark.anyio
async def test_refusal_is_a_permission_deny_in_the_trace() -> None:
    async def refuse(call: Call, verdict: Verdict) -> bool:
        return False

    async def execute(call: Call) -> str:
        raise AssertionError("must not run")

    out = await Chain([recording("danger", Verdict.prompt("rm -rf"), [])]).invoke(
        CALL, execute, approve=refuse
    )
    assert not out.executed
    assert out.verdict.decision is Decision.DENY
    assert out.verdict.kind is toolfail.Kind.PERMISSION
    assert out.verdict.stage == "danger"
    assert "did not approve" in out.verdict.reason
    assert [v.decision for v in out.judgement.trace] == [Decision.PROMPT, Decision.DENY]
