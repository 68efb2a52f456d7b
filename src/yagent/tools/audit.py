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
        # per tool: its spec, and the gate's verdict on its operation under one generation
        self._judged: dict[str, tuple[Spec, int, Verdict]] = {}

    def _verdict(self, spec: Spec) -> Verdict:
        """The gate's verdict on `spec`'s operation. It depends on nothing but the operation
        (built from the spec's declared facts) and the gate's thresholds, which change only
        with its generation: it is judged again when either changed (a rebuilt surface's new
        spec of the same name, lowered thresholds), else the last verdict stands."""
        held = self._judged.get(spec.name)
        if held is not None and held[0] is spec and held[1] == self.gate.generation:
            return held[2]
        audit = self.gate.decide_with(lambda: operation(spec))
        verdict = audit.verdict(self.name)
        self._judged[spec.name] = (spec, audit.generation, verdict)
        return verdict

    async def judge(self, call: Call) -> Verdict:
        spec = self._surface.spec(call.tool)
        if spec is None:  # not in the surface: the disclosure gate before us refuses it
            return Verdict.allow(self.name)
        verdict = self._verdict(spec)
        if verdict.decision is Decision.PROMPT and self._surface.guard.standing(spec):
            return Verdict.allow(self.name)
        return verdict
