"""A halted pause gate (the host can no longer record the run, e.g. a full disk): the run ends at
the step boundary as "paused" with the halt's reason, and no call that had not started starts."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from tests.agents.harness import build
from yagent.agents.loop import run_agent_loop
from yagent.agents.pause import PauseGate
from yagent.agents.results import Status
from yagent.llm.scripted import call, calls

EXIT = json.dumps({"reason": "done", "summary": "the deliverable"})
WHY = "the disk holding /h/sessions.db is full"


def halting_on(gate: PauseGate, kind: str, name: str, seen: list[tuple[str, Any]]) -> Any:
    def publish(k: str, payload: Mapping[str, Any]) -> None:
        seen.append((k, dict(payload)))
        if k == kind and payload.get("name") == name:
            gate.halt(WHY)

    return publish


@pytest.mark.anyio
async def test_a_call_not_started_when_the_halt_comes_never_starts(tmp_path: Path) -> None:
    gate, seen = PauseGate(), list[tuple[str, Any]]()
    turn = calls([("think", '{"thought": "a"}', "a"), ("agent_exit", EXIT, "b")])
    halting = halting_on(gate, "tool_call", "agent_exit", seen)  # its own record failed
    steps = [turn, call("think", '{"thought": "never"}')]
    cfg, engine = build(tmp_path, steps, pause=gate, publish=halting)
    result = await run_agent_loop(cfg, "t")
    assert result.status is Status.PAUSED
    assert result.error == WHY
    assert result.deliverable is None, "the exit call never ran"
    ended = {p["call_id"]: p for k, p in seen if k == "tool_result"}
    assert ended["a"]["ok"] is True
    assert ended["b"]["ok"] is False
    assert "was not started" in ended["b"]["content"]
    assert engine.remaining("coding") == 1, "no model request after the halted step"


@pytest.mark.anyio
async def test_a_halt_during_a_finishing_step_does_not_conclude_the_run(tmp_path: Path) -> None:
    gate, seen = PauseGate(), list[tuple[str, Any]]()
    halting = halting_on(gate, "tool_result", "agent_exit", seen)  # its result not stored
    cfg, _ = build(tmp_path, [call("agent_exit", EXIT)], pause=gate, publish=halting)
    result = await run_agent_loop(cfg, "t")
    assert result.status is Status.PAUSED, "interrupted (resumable), not concluded"
    assert result.error == WHY


@pytest.mark.anyio
async def test_a_halt_at_the_step_record_asks_the_model_nothing(tmp_path: Path) -> None:
    gate = PauseGate()

    async def on_step(n: int) -> None:
        gate.halt(WHY)  # the step's checkpoint could not be written

    cfg, engine = build(tmp_path, [call("agent_exit", EXIT)], pause=gate, on_step=on_step)
    result = await run_agent_loop(cfg, "t")
    assert result.status is Status.PAUSED
    assert engine.remaining("coding") == 1
    assert gate.halted == WHY
    gate.halt("a later reason")
    assert gate.halted == WHY, "the first reason is kept"
