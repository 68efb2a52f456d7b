"""The workspace guard as two rings of the judgement chain: boundary, then authorization.

Each returns PROMPT with the guard's reason when a person must be asked and no standing permission
covers the call, ALLOW otherwise. A tool the surface does not know is not theirs to judge (the
tooldisclose gate before them refuses it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from yagent.kernel.invoke import Call, Verdict

if TYPE_CHECKING:
    from yagent.tools.surface import Surface


class BoundaryStage:
    name = "workspace_boundary"

    def __init__(self, surface: Surface) -> None:
        self._surface = surface

    async def judge(self, call: Call) -> Verdict:
        spec = self._surface.spec(call.tool)
        guard = self._surface.guard
        if spec is None or guard.standing(spec):
            return Verdict.allow(self.name)
        reason = guard.boundary(spec, call.args)
        return Verdict.prompt(reason, stage=self.name) if reason else Verdict.allow(self.name)


class AuthorizationStage:
    name = "authorization"

    def __init__(self, surface: Surface) -> None:
        self._surface = surface

    async def judge(self, call: Call) -> Verdict:
        spec = self._surface.spec(call.tool)
        guard = self._surface.guard
        if spec is None or guard.standing(spec):
            return Verdict.allow(self.name)
        reason = guard.danger(spec, call.args)
        return Verdict.prompt(reason, stage=self.name) if reason else Verdict.allow(self.name)
