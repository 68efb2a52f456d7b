"""A step of the loop does the same work at step 400 as at step 30: nothing it allocates grows
with the history (a request carries the history as a view, not a copy).

Work is counted, not timed: `tracemalloc` gives, per step, the bytes the step kept (retained) and
the most it held above its start until its model request went out (transient: the economy, the
metering and the request's building, where a copy of the history freed before the step ends would
show; the tool call that follows has larger transients of its own). A copy of an n-message
history is 8·n bytes of references: at step 400 (≈ 800 messages) one copy per step is ≈ 6.4 KB
more than at step 30; the bound below is a tenth of that.
"""

from __future__ import annotations

import json
import statistics
import tracemalloc
from pathlib import Path

import pytest

from tests.agents.harness import build
from yagent.agents.economy import ContextSettings
from yagent.agents.loop import run_agent_loop
from yagent.agents.results import Status
from yagent.llm import AssistantTurn
from yagent.llm.scripted import call

STEPS = 400
EARLY = range(20, 40)  # steps whose medians are compared with …
LATE = range(STEPS - 20, STEPS)  # … these
SLACK = 640  # bytes: a tenth of one copy of the history at step 400


class StepMemory:
    """Per step: the bytes it kept, and the most it held above its start until its request."""

    def __init__(self) -> None:
        self.start: int | None = None
        self.kept: list[int] = []
        self.held: list[int] = []  # from the step's start to its model request

    async def on_step(self, step: int) -> None:
        current, _ = tracemalloc.get_traced_memory()
        if self.start is not None:
            self.kept.append(current - self.start)
        tracemalloc.reset_peak()
        self.start = current

    def on_event(self, kind: str, payload: object) -> None:
        if kind == "model_request" and self.start is not None:
            _, peak = tracemalloc.get_traced_memory()
            self.held.append(peak - self.start)

    def growth(self) -> tuple[float, float]:
        """Late steps' medians minus early steps' (kept, held)."""

        def median(values: list[int], steps: range) -> float:
            return statistics.median(values[i] for i in steps)

        return (
            median(self.kept, LATE) - median(self.kept, EARLY),
            median(self.held, LATE) - median(self.held, EARLY),
        )


def script() -> list[AssistantTurn]:
    steps = [
        call("think", json.dumps({"thought": f"s{i:04d}"}), call_id=f"c{i:04d}")
        for i in range(STEPS)
    ]
    exit_args = json.dumps({"reason": "done", "summary": "ok"})
    return [*steps, call("agent_exit", exit_args, call_id="cx")]


@pytest.mark.anyio
@pytest.mark.parametrize("economy", [False, True], ids=["plain", "with-economy"])
async def test_a_step_allocates_no_more_at_step_400_than_at_step_30(
    tmp_path: Path, economy: bool
) -> None:
    memory = StepMemory()
    cfg, engine = build(
        tmp_path, script(), max_steps=STEPS + 1, on_step=memory.on_step, publish=memory.on_event
    )
    if economy:  # metering, offload's bookkeeping and compaction's check run every request
        cfg.context = ContextSettings(window=10_000_000)
    tracemalloc.start()
    try:
        result = await run_agent_loop(cfg, "count")
    finally:
        tracemalloc.stop()
    assert result.status is Status.FINISHED
    assert len(engine.requests) == STEPS + 1  # the engine kept every request: it costs O(1)
    assert len(engine.requests[-1][1].messages) == 2 * STEPS + 1
    kept, held = memory.growth()
    assert kept <= SLACK, f"a late step keeps {kept:.0f} bytes more than an early one"
    assert held <= SLACK, f"a late step holds {held:.0f} bytes more than an early one"
