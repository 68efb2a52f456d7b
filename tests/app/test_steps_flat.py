"""A step of the full app allocates no more at step 400 than at step 30 (issue 17: a 1 000-step
run stays flat): through a real App run — the SQLite session store, pii, telemetry, checkpoints,
the context economy — nothing a step allocates grows with the history.

Work is counted, not timed (`tracemalloc`, per step: the bytes kept, and the most held above the
step's start). A copy of an n-message history is 8·n bytes of references: ≈ 6.4 KB at step 400.
"""

from __future__ import annotations

import json
import statistics
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from yagent.app.assemble import App, open_app
from yagent.app.config import load
from yagent.llm.scripted import ScriptedEngine, call
from yagent.messaging import Event

from .files import write

STEPS = 400
EARLY = range(20, 40)
LATE = range(STEPS - 20, STEPS)
SLACK = 640  # bytes: a tenth of one copy of the history at step 400
CONFIG = f"""
[agents.counter]
prompt = "Count."
tools = ["think"]
max_steps = {STEPS + 1}
"""


class StepMemory:
    """From one model request to the next: the bytes kept, and the most held above the start.
    The terminal's queue is drained at each request, as its pump would (here without its timing:
    what a step keeps is then what the app keeps, not how many events wait to be shown)."""

    def __init__(self, app: App) -> None:
        self.app = app
        self.start: int | None = None
        self.kept: list[int] = []
        self.held: list[int] = []

    def observe(self, event: Event) -> None:
        if event.type != "model_request":
            return
        while self.app.dispatcher.next_in_order() is not None:
            pass
        current, peak = tracemalloc.get_traced_memory()
        if self.start is not None:
            self.kept.append(current - self.start)
            self.held.append(peak - self.start)
        tracemalloc.reset_peak()
        self.start, _ = tracemalloc.get_traced_memory()

    def growth(self, values: list[int]) -> float:
        return statistics.median(values[i] for i in LATE) - statistics.median(
            values[i] for i in EARLY
        )


def script() -> list[Any]:
    steps = [
        call("think", json.dumps({"thought": f"s{i:04d}"}), call_id=f"c{i:04d}")
        for i in range(STEPS)
    ]
    exit_args = json.dumps({"reason": "done", "summary": "ok"})
    return [*steps, call("agent_exit", exit_args, call_id="cx")]


@pytest.mark.anyio
async def test_an_app_step_allocates_no_more_at_step_400_than_at_step_30(tmp_path: Path) -> None:
    home, ws = tmp_path / "home", tmp_path / "ws"
    ws.mkdir()
    write(home / "config.toml", CONFIG)
    engine = ScriptedEngine({"counter": script()}, markers={"counter": "custom agent 'counter'"})
    config = load(home=home, workspace=ws, env={})
    async with open_app(config, home=home, workspace=ws, interactive=False, engine=engine) as app:
        memory = StepMemory(app)
        app.observers.append(memory.observe)
        tracemalloc.start()
        try:
            _, result = await app.run("count", agent_name="counter")
        finally:
            tracemalloc.stop()
    assert result.status.value == "finished", result.error
    assert len(engine.requests[-1][1].messages) > 2 * STEPS
    kept, held = memory.growth(memory.kept), memory.growth(memory.held)
    assert kept <= SLACK, f"a late step keeps {kept:.0f} bytes more than an early one"
    assert held <= SLACK, f"a late step holds {held:.0f} bytes more than an early one"
