"""gate: the execution gate of progressive disclosure, and its ring in the `invoke` chain.

Contract — a strict dichotomy for every call that is not already visible:
- The tool is in the catalog but its schema is not loaded ⇒ DENY, kind `NOT_LOADED`, retryable,
  and this rejection loads the schema (`activated`). The model's retry then passes through the
  normal path: no call ever goes around the gate.
- The tool is not in the catalog (or has no name) ⇒ DENY, kind `FORBIDDEN`, not retryable, and
  nothing is loaded. There is no way around it.
- A visible tool (hot or loaded) ⇒ ALLOW.
Verdicts carry the kind and retryability explicitly, so `toolfail` routes them without parsing
text; the reason is written for the model (what to do next). Which tools are hot, and what runs
after the gate, is the host's.
"""

from __future__ import annotations

from dataclasses import dataclass

from yagent.kernel.judge import toolfail
from yagent.kernel.judge.invoke import Call, Verdict
from yagent.kernel.judge.tooldisclose.disclosure import Disclosure

STAGE_NAME = "tooldisclose"
SUGGESTIONS = 3


def not_loaded_reason(name: str) -> str:
    return (
        f"Tool {name!r} is in your catalog but its schema had not been loaded, so this call did "
        "not run. Its schema is loaded now: call it again now, with arguments that follow that "
        "schema."
    )


def forbidden_reason(name: str, suggestions: tuple[str, ...]) -> str:
    text = (
        f"No such tool {name!r}: this call did not run and cannot run. Do not call it again; "
        "available tools are listed in the catalog — search it or pick one from there."
    )
    if suggestions:
        text += " Closest catalog tools: " + ", ".join(suggestions) + "."
    return text


@dataclass(frozen=True, slots=True)
class Gate:
    """Judges one tool name against a run's `Disclosure` (see the module contract)."""

    disclosure: Disclosure
    stage: str = STAGE_NAME

    def check(self, tool_name: str) -> Verdict:
        disclosure = self.disclosure
        if tool_name and disclosure.is_visible(tool_name):
            return Verdict.allow(stage=self.stage)
        if not tool_name or tool_name not in disclosure.catalog:
            return Verdict.deny(
                forbidden_reason(tool_name, self._suggest(tool_name)),
                kind=toolfail.Kind.FORBIDDEN,
                retryable=False,
                stage=self.stage,
            )
        # Loading is the rejection's side effect: the retry must find the schema in place.
        disclosure.load([tool_name])
        return Verdict.deny(
            not_loaded_reason(tool_name),
            kind=toolfail.Kind.NOT_LOADED,
            retryable=True,
            stage=self.stage,
        )

    def _suggest(self, tool_name: str) -> tuple[str, ...]:
        if not tool_name.strip():
            return ()
        return self.disclosure.catalog.search(tool_name, SUGGESTIONS).names


@dataclass(frozen=True, slots=True)
class Stage:
    """The gate as a ring of `invoke.Chain`."""

    gate: Gate

    @property
    def name(self) -> str:
        return self.gate.stage

    async def judge(self, call: Call) -> Verdict:
        return self.gate.check(call.tool)
