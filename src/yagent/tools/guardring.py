"""The guard ring: the independent refusing rings judged together, so the model hears every
reason at once (`kernel.guardset`).

Contract:
- `DenialRing(stages)` sits in the Surface's chain right before those same stages (the worktree
  ring, the audit gate, the command policy, the workspace boundary — each judges the call on its
  own facts, none depends on another's answer). It asks all of them (`guardset.Set.evaluate`):
  - no stage denies ⇒ ALLOW: the stages after it then judge in order as before, so each question
    is still put to the person one at a time, an approval still continues with the next stage,
    and a "remember" answer still belongs to the stage that asked;
  - one stage denies ⇒ that stage's own verdict (its stage name, kind and reason, unchanged) —
    before any person is asked about a call that would be refused anyway;
  - several deny ⇒ guardset's merged denial: every reason, most important first (ring order),
    retryable only if each is, and which one really blocks.
  They are asked one at a time, in ring order (none of them waits on anything: a task per stage
  would cost more than the judgement).
- A stage that raises is a denial of kind `internal` naming it (fail closed), as in the chain.
Cost: on the common path (nothing denies) each of these stages judges twice, once here and once
in its own ring (docs/architecture.md, "the path of one tool call").
"""

from __future__ import annotations

from collections.abc import Sequence

from yagent.kernel import guardset
from yagent.kernel.invoke import Call, Stage, Verdict

STAGE = "guards"


class DenialRing:
    name = STAGE

    def __init__(self, stages: Sequence[Stage]) -> None:
        self._set = guardset.Set(
            guardset.Guard(stage.name, rank, stage.judge) for rank, stage in enumerate(stages)
        )

    @property
    def guards(self) -> tuple[str, ...]:
        return self._set.names

    async def judge(self, call: Call) -> Verdict:
        outcome = await self._set.evaluate(call, concurrently=False)  # none of them waits
        if not outcome.denials:
            return Verdict.allow(self.name)
        if len(outcome.denials) == 1:
            return outcome.denials[0]
        return outcome.verdict
