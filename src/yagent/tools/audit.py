"""The audit gate (`yagent.kernel.judge.auditgate`) as a ring of the Surface's chain.

Each call is judged as an operation whose risk and "mutating" flag come from the tool's declared
facts, never its name: read-only, cognitive, flow, meta and delegation tools carry no risk and do
not mutate; built-in writers, shell, network and browser tools are low risk (their real judgement
is the workspace guard and the command policy). An external (MCP) tool is judged by its effect as
read from its annotations (`tools.mcp.specs`): read-only and closed-world carries no risk; read-only
and open-world is low risk and not mutating; a mutating one is low risk and mutating, high risk when
it is destructive (declared, or by the MCP default for a tool that declares nothing).
Standing permissions (-y, always, skip all, project) answer the gate's questions like any other;
a DENY (risk at or over `deny_at`) is never answered away. The thresholds come from `[audit]` in
config and can only be lowered while yagent runs.
"""

from __future__ import annotations

from yagent.kernel.judge import auditgate
from yagent.kernel.judge.invoke import Call, Decision, Verdict
from yagent.tools.toolview import ToolView
from yagent.toolspec import Effect, Spec

# A delegation carries none itself: the delegated agent's every call passes its own ring.
_NO_RISK = frozenset({Effect.READ, Effect.COGNITIVE, Effect.FLOW, Effect.META, Effect.DELEGATE})
LOW = auditgate.Level.LOW.value
HIGH = auditgate.Level.HIGH.value


def operation(spec: Spec) -> auditgate.Op:
    """The operation the gate judges for a call to `spec`."""
    if spec.effect in _NO_RISK:
        return auditgate.Op(spec.name, 0.0, False)
    if not spec.external:
        return auditgate.Op(spec.name, LOW, True)
    if "read-only" in spec.tags:
        return auditgate.Op(spec.name, LOW, False)
    return auditgate.Op(spec.name, HIGH if "destructive" in spec.tags else LOW, True)


class AuditStage:
    name = "audit"

    def __init__(self, surface: ToolView, gate: auditgate.AuditGate) -> None:
        self._surface = surface
        self.gate = gate
        self._ops: dict[str, tuple[Spec, auditgate.Op]] = {}  # per tool: its spec and op

    def _operation(self, spec: Spec) -> auditgate.Op:
        """`operation(spec)`, built once per spec object (a rebuilt surface's new spec of the
        same name is judged afresh); the gate's thresholds are read at every call."""
        held = self._ops.get(spec.name)
        if held is None or held[0] is not spec:
            held = self._ops[spec.name] = (spec, operation(spec))
        return held[1]

    async def judge(self, call: Call) -> Verdict:
        spec = self._surface.spec(call.tool)
        if spec is None:  # not in the surface: the disclosure gate before us refuses it
            return Verdict.allow(self.name)
        verdict = self.gate.decide_with(lambda: self._operation(spec)).verdict(self.name)
        if verdict.decision is Decision.PROMPT and self._surface.guard.standing(spec):
            return Verdict.allow(self.name)
        return verdict
