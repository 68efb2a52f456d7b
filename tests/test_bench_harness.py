"""bench_loop's app column measures the app, not its own harness: the agent lookup it wraps to
raise the step limit is wrapped once per run, never around the previous run's wrapper (each run
of a step count paid one more nested lookup than the run before — issue 17's seventh pass)."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"
sys.path.insert(0, str(BENCH))

import bench_loop  # noqa: E402


def test_the_agent_lookup_is_wrapped_once_however_many_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    replaced: list[Any] = []
    replace = dataclasses.replace

    def counting(obj: Any, /, **changes: Any) -> Any:
        replaced.append(changes)
        return replace(obj, **changes)

    async def look_up() -> Any:
        async with bench_loop._open_app(tmp_path / "home", workspace) as app:
            for steps in (5, 50, 7, 9, 11):  # five runs' preparations
                bench_loop._bench_agent(app, steps)
            monkeypatch.setattr(bench_loop.dataclasses, "replace", counting)
            return app.agent("coding")

    agent = anyio.run(look_up)
    assert replaced == [{"max_steps": max(agent.max_steps, 11)}]
    assert agent.max_steps >= 11
