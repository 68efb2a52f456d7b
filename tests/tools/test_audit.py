"""The audit gate in the Surface's chain: risk and "mutating" from declared facts; unknown
mutation goes to the person; thresholds only tighten; standing permissions answer questions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from yagent.kernel.judge import auditgate
from yagent.kernel.judge.invoke import Call, Decision
from yagent.tools import flow
from yagent.tools.adapter import Adapter, ToolContext
from yagent.tools.audit import operation
from yagent.tools.guard import WorkspaceGuard
from yagent.tools.surface import Surface, SurfaceOptions
from yagent.tools.yolo import Yolo
from yagent.toolspec import Effect, Spec, Tier
from yagent.toolspec.builtin import BUILTIN, builtin_by_name
from yagent.toolspec.profiles import profile


def ext(name: str, *tags: str) -> Spec:
    return Spec(
        name,
        "External.",
        {"type": "object"},
        Effect.READ if "read-only" in tags else Effect.WRITE,
        Tier.HOT,
        tags=frozenset({"mcp", *tags}),
        external=True,
    )


def test_operations_come_from_declared_facts() -> None:
    specs = builtin_by_name()
    assert operation(specs["read_file"]) == auditgate.Op("read_file", 0.0, False)
    assert operation(specs["write_file"]).mutating is True
    assert operation(ext("s__x", "destructive")).risk >= auditgate.Level.HIGH.value
    assert operation(ext("s__x", "read-only")).mutating is False
    assert operation(ext("s__x", "idempotent")).mutating is True
    assert operation(ext("s__x")) == auditgate.Op("s__x", auditgate.Level.LOW.value, True)
    # declares nothing: the MCP defaults make it destructive and mutating (tools.mcp.specs)
    unannotated = operation(ext("s__x", "unannotated", "destructive", "open-world"))
    assert unannotated == auditgate.Op("s__x", auditgate.Level.HIGH.value, True)


async def _call(
    workspace: Path, spec: Spec, *, yolo: Yolo = Yolo.OFF, gate: auditgate.AuditGate | None = None
) -> Any:
    surface = Surface(
        BUILTIN,
        profile("coding"),
        WorkspaceGuard(workspace, yolo=yolo),
        external=[spec],
        options=SurfaceOptions(deferred=False, audit=gate or auditgate.AuditGate()),
    )

    async def execute(ctx: ToolContext, args: Any) -> dict[str, Any]:
        return {"ran": True}

    adapter = Adapter(ToolContext(workspace, surface), {spec.name: execute, "think": flow.think})
    return await adapter.call(spec.name, "{}", "c1")


@pytest.mark.anyio
async def test_unannotated_tool_asks_and_yolo_answers(tmp_path: Path) -> None:
    unannotated = ext("s__unannotated", "unannotated", "destructive", "open-world")
    asked = await _call(tmp_path, unannotated)
    assert not asked.ok
    assert json.loads(asked.content)["stage"] == "audit"
    assert (await _call(tmp_path, unannotated, yolo=Yolo.YOLO)).ok
    assert (await _call(tmp_path, ext("s__reader", "read-only"))).ok


@pytest.mark.anyio
async def test_deny_is_never_answered_away(tmp_path: Path) -> None:
    gate = auditgate.AuditGate()
    gate.lower_with(lambda t: auditgate.Thresholds(0.5, 0.7, False))
    res = await _call(tmp_path, ext("s__drop", "destructive"), yolo=Yolo.FULL, gate=gate)
    assert not res.ok
    assert json.loads(res.content)["kind"] == "permission"
    with pytest.raises(auditgate.LoosenError):
        gate.lower_with(lambda t: auditgate.Thresholds(0.9, 1.0, False))


@pytest.mark.anyio
async def test_thresholds_lowered_between_calls_judge_the_next_call(tmp_path: Path) -> None:
    gate = auditgate.AuditGate()
    spec = ext("s__write", "idempotent")  # low risk, mutating: allowed at the defaults
    surface = Surface(
        BUILTIN,
        profile("coding"),
        WorkspaceGuard(tmp_path),
        external=[spec],
        options=SurfaceOptions(deferred=False, audit=gate),
    )
    stage = next(s for s in surface.chain.stages if s.name == "audit")
    assert (await stage.judge(Call(spec.name))).allowed
    assert (await stage.judge(Call(spec.name))).allowed  # the same tool again: same answer
    gate.tighten(review_mutating=True)
    assert (await stage.judge(Call(spec.name))).decision is Decision.PROMPT
    gate.tighten(deny_at=0.25)
    assert (await stage.judge(Call(spec.name))).decision is Decision.DENY
