"""The guard ring (`tools.guardring`) in an `invoke.Chain`: every reason at once, each stage
judging a call once, and parallel calls never answered with each other's verdicts."""

from __future__ import annotations

from collections import Counter

import anyio
import anyio.lowlevel
import pytest

from yagent.kernel.judge.invoke import Call, Chain, Verdict
from yagent.tools.guardring import DenialRing


class Counted:
    """A stage that says `verdict` (or, when given, what `by_tool` says for the call's tool)."""

    def __init__(self, name: str, judged: Counter[str], by_tool: dict[str, Verdict]) -> None:
        self.name = name
        self._judged = judged
        self._by_tool = by_tool

    async def judge(self, call: Call) -> Verdict:
        self._judged[self.name] += 1
        await anyio.lowlevel.checkpoint()  # let a parallel call's judgement interleave
        return self._by_tool.get(call.tool, Verdict.allow(self.name))


def chain(judged: Counter[str], by_stage: dict[str, dict[str, Verdict]]) -> Chain:
    stages = [Counted(n, judged, by_stage.get(n, {})) for n in ("areas", "audit", "boundary")]
    ring = DenialRing(stages)
    return Chain([ring, *ring.recalled()])


@pytest.mark.anyio
async def test_each_stage_judges_a_call_once_when_nothing_denies() -> None:
    judged: Counter[str] = Counter()
    judgement = await chain(judged, {}).judge(Call("read_file", {"path": "a"}))
    assert judgement.verdict.allowed
    assert judged == Counter({"areas": 1, "audit": 1, "boundary": 1})


@pytest.mark.anyio
async def test_one_denial_is_that_stage_s_own_and_several_are_merged() -> None:
    judged: Counter[str] = Counter()
    no = {"rm": Verdict.deny("audit says no", stage="audit")}
    alone = await chain(judged, {"audit": no}).judge(Call("rm"))
    assert not alone.verdict.allowed
    assert alone.verdict.stage == "audit"
    both = {"audit": no, "boundary": {"rm": Verdict.deny("outside", stage="boundary")}}
    merged = await chain(Counter(), both).judge(Call("rm"))
    assert "audit says no" in merged.verdict.reason
    assert "outside" in merged.verdict.reason


@pytest.mark.anyio
async def test_parallel_calls_keep_their_own_verdicts() -> None:
    judged: Counter[str] = Counter()
    ring_chain = chain(judged, {"boundary": {"bad": Verdict.deny("outside", stage="boundary")}})
    results: dict[str, bool] = {}

    async def one(tool: str) -> None:
        results[tool] = (await ring_chain.judge(Call(tool))).verdict.allowed

    async with anyio.create_task_group() as tg:
        for tool in ("good", "bad", "good2"):
            tg.start_soon(one, tool)
    assert results == {"good": True, "bad": False, "good2": True}
