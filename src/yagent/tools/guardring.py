"""The guard ring: the independent refusing rings judged together, so the model hears every
reason at once (`kernel.judge.guardset`).

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
- Each stage judges a call once: `recalled()` gives the stages for their own places in the chain,
  and each of them answers with the verdict the ring already holds for that very call object
  (kept in a context variable, so calls judged in parallel tasks never see each other's), and
  judges afresh only a call the ring did not judge.
- A stage that raises is a denial of kind `internal` naming it (fail closed), as in the chain.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextvars import ContextVar

from yagent.kernel.judge import guardset
from yagent.kernel.judge.invoke import Call, Stage, Verdict

STAGE = "guards"

_JUDGED: ContextVar[tuple[Call, dict[str, Verdict]] | None] = ContextVar(
    "yagent_guard_ring", default=None
)


class DenialRing:
    name = STAGE

    def __init__(self, stages: Sequence[Stage]) -> None:
        self._stages = tuple(stages)
        self._set = guardset.Set(
            guardset.Guard(stage.name, rank, stage.judge) for rank, stage in enumerate(stages)
        )
        self._names = self._set.names  # the set never changes: named once, not per call

    @property
    def guards(self) -> tuple[str, ...]:
        return self._names

    def recalled(self) -> list[Stage]:
        """The ring's stages for their own places in the chain (see the module contract)."""
        return [Recalled(stage) for stage in self._stages]

    async def judge(self, call: Call) -> Verdict:
        outcome = await self._set.evaluate(call, concurrently=False)  # none of them waits
        _JUDGED.set((call, dict(zip(self._names, outcome.verdicts, strict=True))))
        if not outcome.denials:
            return Verdict.allow(self.name)
        if len(outcome.denials) == 1:
            return outcome.denials[0]
        return outcome.verdict


class Recalled:
    """One stage of the ring in its own place in the chain: the ring's verdict for this call."""

    def __init__(self, stage: Stage) -> None:
        self.name = stage.name
        self._stage = stage

    async def judge(self, call: Call) -> Verdict:
        held = _JUDGED.get()
        if held is not None and held[0] is call:
            verdict = held[1].get(self.name)
            if verdict is not None:
                return verdict
        return await self._stage.judge(call)
