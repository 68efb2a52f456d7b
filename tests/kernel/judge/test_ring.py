"""The judgement ring composed as the spec draws it (「工具调用只有一条路」): guardset →
hooks → tooldisclose → policy → dispatch, all in one `invoke.Chain`, judging the same call."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from yagent.kernel.judge import auditgate, dispatch, guardset, hookengine, tooldisclose, toolfail
from yagent.kernel.judge.invoke import Call, Chain, Decision, Verdict

CATALOG = tooldisclose.Catalog(
    [
        tooldisclose.ToolEntry("read", "Read a file."),
        tooldisclose.ToolEntry("delegate", "Hand a task to another agent."),
        tooldisclose.ToolEntry("deploy", "Deploy to production."),
    ]
)
RISK = {"read": 0.0, "delegate": 0.1, "deploy": 0.9}


@dataclass
class Runner:
    deny: set[str]

    async def run(self, hook: hookengine.Hook, event: hookengine.Event) -> hookengine.HookResult:
        if event.tool in self.deny:
            return hookengine.HookResult(Decision.DENY, "hook says no")
        return hookengine.HookResult(Decision.ALLOW)


def ring(*, blocked: set[str] = frozenset(), hook_deny: set[str] = frozenset()) -> Chain:  # type: ignore[assignment]
    async def not_blocked(call: Call) -> Verdict:
        if call.tool in blocked:
            return Verdict.deny(f"{call.tool} is blocked")
        return Verdict.allow()

    async def depth_ok(call: Call) -> Verdict:
        return Verdict.allow() if call.depth < 5 else Verdict.deny("too deep")

    guards = guardset.Set.of(
        guardset.Guard("blocklist", 1, not_blocked), guardset.Guard("depth", 2, depth_ok)
    )
    disclosure = tooldisclose.Disclosure(CATALOG, always=["read", "delegate", "deploy"])
    engine = hookengine.Engine(
        [hookengine.Hook("audit-hook", hookengine.PRE_TOOL_USE)], Runner(set(hook_deny))
    )
    gate = auditgate.AuditGate()
    topology = dispatch.Guard(dispatch.MappingSource({"lead": ["worker"], "worker": []}), 2)

    def op_of(call: Call) -> auditgate.Op:
        return auditgate.Op(call.tool, RISK[call.tool], call.tool == "deploy")

    def delegation_of(call: Call) -> tuple[str, str, int] | None:
        if call.tool != "delegate":
            return None
        return call.caller, str(call.args["to"]), call.depth

    return Chain(
        [
            guardset.stage(guards),
            hookengine.stage(engine),
            tooldisclose.Stage(tooldisclose.Gate(disclosure)),
            auditgate.stage(gate, op_of),
            dispatch.stage(topology, delegation_of),
        ]
    )


@pytest.mark.anyio
async def test_a_harmless_call_passes_every_ring() -> None:
    judgement = await ring().judge(Call("read", {"path": "a"}, caller="lead"))
    assert judgement.verdict.allowed
    assert len(judgement.trace) == 5


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("call", "options", "stage", "decision"),
    [
        (Call("read", caller="lead"), {"blocked": {"read"}}, "guardset", Decision.DENY),
        (Call("read", caller="lead"), {"hook_deny": {"read"}}, "hooks", Decision.DENY),
        (Call("nope", caller="lead"), {}, "tooldisclose", Decision.DENY),
        (Call("deploy", caller="lead"), {}, "policy", Decision.PROMPT),
        (Call("delegate", {"to": "lead"}, caller="worker"), {}, "dispatch", Decision.DENY),
    ],
)
async def test_each_ring_stops_the_call_where_it_should(
    call: Call, options: dict[str, set[str]], stage: str, decision: Decision
) -> None:
    judgement = await ring(**options).judge(call)  # type: ignore[arg-type]
    assert judgement.verdict.decision is decision
    assert judgement.verdict.stage.startswith(stage)


@pytest.mark.anyio
async def test_the_ring_denies_an_uncataloged_tool_before_policy_sees_it() -> None:
    judgement = await ring().judge(Call("rm_everything", caller="lead"))
    assert judgement.verdict.kind is toolfail.Kind.FORBIDDEN
    assert not judgement.verdict.retryable
    assert [v.stage for v in judgement.trace][-1].startswith("tooldisclose")
