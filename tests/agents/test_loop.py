"""run_agent_loop end to end with the scripted engine and the real surface/adapter."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.agents.harness import Probe, build
from yagent.agents import loop as loop_module
from yagent.agents.activity import Monitor
from yagent.agents.loop import run_agent_loop
from yagent.agents.loopconfig import GENERIC_REMINDER
from yagent.agents.pause import PauseGate
from yagent.agents.results import Status
from yagent.kernel.context import reminder
from yagent.llm import AssistantTurn, EngineError, Request
from yagent.llm.scripted import call, calls, say

EXIT = json.dumps({"reason": "done", "summary": "the deliverable"})


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return tmp_path


@pytest.mark.anyio
async def test_c2_successful_exit_ends_the_run_with_the_deliverable(ws: Path) -> None:
    cfg, engine = build(ws, [call("think", '{"thought": "plan"}'), call("agent_exit", EXIT)])
    result = await run_agent_loop(cfg, "do it")
    assert result.status is Status.FINISHED
    assert result.deliverable == "the deliverable"
    assert result.submitted
    assert result.steps == 2
    assert result.note == ""
    assert engine.remaining("coding") == 0


@pytest.mark.anyio
async def test_c2_failed_exit_does_not_end_the_run(ws: Path) -> None:
    cfg, _ = build(ws, [call("agent_exit", '{"bogus": 1}'), call("agent_exit", EXIT)])
    result = await run_agent_loop(cfg, "t")
    assert result.status is Status.FINISHED
    assert result.steps == 2


@pytest.mark.anyio
async def test_without_stop_on_finish_exit_does_not_end(ws: Path) -> None:
    cfg, _ = build(
        ws,
        [call("agent_exit", EXIT), say("still here")],
        stop_on_finish=False,
        no_action_retry_limit=0,
    )
    result = await run_agent_loop(cfg, "t")
    assert result.status is Status.ANSWERED
    assert result.steps == 2


@pytest.mark.anyio
async def test_plain_text_gets_the_generic_reminder_then_submits(ws: Path) -> None:
    cfg, engine = build(ws, [say("I think it's fine."), call("agent_exit", EXIT)])
    result = await run_agent_loop(cfg, "t")
    assert result.status is Status.FINISHED
    second = engine.requests[1][1]
    nudge = second.messages[-1]
    assert nudge.role == "user"
    assert reminder.unwrap(nudge.content) == GENERIC_REMINDER


@pytest.mark.anyio
async def test_c8_analysis_agents_get_their_own_reminder(ws: Path) -> None:
    cfg, engine = build(
        ws,
        [say("report"), call("agent_exit", EXIT)],
        no_action_reminder="Submit your report via agent_exit.",
    )
    await run_agent_loop(cfg, "t")
    assert reminder.unwrap(engine.requests[1][1].messages[-1].content) == (
        "Submit your report via agent_exit."
    )


@pytest.mark.anyio
async def test_g11_nudges_used_up_ends_with_a_distinguishable_note(ws: Path) -> None:
    cfg, _ = build(ws, [say("a"), say("b")], no_action_retry_limit=1)
    result = await run_agent_loop(cfg, "t")
    assert result.status is Status.ANSWERED
    assert result.deliverable is None
    assert result.text == "b"
    assert "no deliverable was submitted" in result.note


@pytest.mark.anyio
async def test_max_steps(ws: Path) -> None:
    cfg, _ = build(ws, [call("think", '{"thought": "x"}')] * 3, max_steps=3)
    result = await run_agent_loop(cfg, "t")
    assert result.status is Status.MAX_STEPS
    assert result.steps == 3


@pytest.mark.anyio
async def test_g9_run_agent_loop_stamps_delegation_on_every_event(ws: Path) -> None:
    events: list[tuple[str, Mapping[str, Any]]] = []
    cfg, _ = build(
        ws, [say("hm"), call("think", '{"thought": "x"}'), call("agent_exit", EXIT)], events=events
    )
    await run_agent_loop(cfg, "t")
    kinds = {k for k, _ in events}
    assert {
        "model_request",
        "assistant_turn",
        "tool_call",
        "tool_result",
        "reminder",
        "run_end",
    } <= kinds
    assert all(p["delegation_id"] == "deleg-1" for _, p in events)


@pytest.mark.anyio
async def test_c17_g17_every_step_with_tool_calls_writes_activity(ws: Path) -> None:
    rollout: list[tuple[str, Mapping[str, Any]]] = []
    cfg, _ = build(
        ws, [say("x"), call("think", '{"thought": "x"}'), call("agent_exit", EXIT)], rollout=rollout
    )
    await run_agent_loop(cfg, "t")
    assert [k for k, _ in rollout] == ["sub_agent_activity", "sub_agent_activity"]
    assert [p["step"] for _, p in rollout] == [2, 3]
    assert rollout[0][1]["calls"] == [{"call_id": "call_think", "name": "think", "ok": True}]


@pytest.mark.anyio
async def test_g1_read_only_calls_run_in_parallel_and_serial_arm(ws: Path) -> None:
    many = calls([("lab__slow_read", "{}", f"c{i}") for i in range(4)])
    probe = Probe()
    cfg, _ = build(ws, [many, call("agent_exit", EXIT)], probe=probe)
    await run_agent_loop(cfg, "t")
    assert probe.peak >= 2
    serial_probe = Probe()
    cfg, _ = build(ws, [many, call("agent_exit", EXIT)], probe=serial_probe, parallel_limit=1)
    await run_agent_loop(cfg, "t")
    assert serial_probe.peak == 1


@pytest.mark.anyio
async def test_c12_checkpoint_only_on_error_termination(ws: Path) -> None:
    checkpoints: list[Mapping[str, Any]] = []
    cfg, _ = build(ws, [call("agent_exit", EXIT)], checkpoints=checkpoints)
    await run_agent_loop(cfg, "t")
    assert checkpoints == []

    def broken(request: Request) -> AssistantTurn:
        raise EngineError(loop_module.toolfail.Kind.UNAUTHORIZED, "bad key")

    cfg, _ = build(ws, [call("think", '{"thought": "x"}'), broken], checkpoints=checkpoints)
    result = await run_agent_loop(cfg, "t")
    assert result.status is Status.ERROR
    assert "unauthorized" in result.error
    assert len(checkpoints) == 1
    assert checkpoints[0]["step"] == 2
    assert checkpoints[0]["status"] == "error"


@pytest.mark.anyio
async def test_g5_outside_cancel_accounts_for_every_call_and_checkpoints(ws: Path) -> None:
    checkpoints: list[Mapping[str, Any]] = []
    events: list[tuple[str, Mapping[str, Any]]] = []
    step = calls([("lab__hang", "{}", "h1"), ("lab__slow_read", "{}", "r1")])
    cfg, _ = build(ws, [step], checkpoints=checkpoints, events=events)
    with anyio.move_on_after(0.3) as scope:
        await run_agent_loop(cfg, "t")
    assert scope.cancelled_caught
    results = [p for k, p in events if k == "tool_result"]
    assert [p["call_id"] for p in results] == ["h1", "r1"]
    assert results[0]["kind"] == "cancelled"
    assert checkpoints
    assert checkpoints[0]["status"] == "cancelled"


@pytest.mark.anyio
async def test_g6_tool_timeout_seam(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(loop_module, "DEFAULT_TOOL_TIMEOUT", 0.05)
    events: list[tuple[str, Mapping[str, Any]]] = []
    cfg, _ = build(ws, [call("lab__hang"), call("agent_exit", EXIT)], events=events)
    result = await run_agent_loop(cfg, "t")
    assert result.status is Status.FINISHED
    timed_out = next(p for k, p in events if k == "tool_result" and p["name"] == "lab__hang")
    assert timed_out["kind"] == "timeout"
    assert "did not finish within" in json.loads(timed_out["content"])["error"]


@pytest.mark.anyio
async def test_idle_timeout_is_not_a_cancel(ws: Path) -> None:
    checkpoints: list[Mapping[str, Any]] = []
    monitor = Monitor(idle=0.1)
    cfg, _ = build(
        ws, [call("lab__hang")], checkpoints=checkpoints, monitor=monitor, monitor_interval=0.01
    )
    result = await run_agent_loop(cfg, "t")
    assert result.status is Status.IDLE_TIMEOUT
    assert "no activity" in result.error
    assert checkpoints[0]["status"] == "idle_timeout"


@pytest.mark.anyio
async def test_total_timeout(ws: Path) -> None:
    monitor = Monitor(total=0.1, idle=100)
    cfg, _ = build(ws, [call("lab__hang")], monitor=monitor, monitor_interval=0.01)
    result = await run_agent_loop(cfg, "t")
    assert result.status is Status.TOTAL_TIMEOUT


@pytest.mark.anyio
async def test_c5_pause_at_the_step_boundary_and_resume_in_place(ws: Path) -> None:
    gate = PauseGate()
    seen_paused: list[bool] = []

    def second(request: Request) -> AssistantTurn:
        seen_paused.append(gate.paused)
        return call("agent_exit", EXIT)

    def first(request: Request) -> AssistantTurn:
        gate.pause()  # requested mid-step: takes effect at the next boundary
        return call("think", '{"thought": "x"}')

    cfg, engine = build(ws, [first, second], pause=gate)
    async with anyio.create_task_group() as tg:
        box: list[Any] = []

        async def go() -> None:
            box.append(await run_agent_loop(cfg, "t"))

        tg.start_soon(go)
        await anyio.sleep(0.05)
        assert engine.remaining("coding") == 1, "held at the boundary after step 1"
        gate.resume()
    assert box[0].status is Status.FINISHED
    assert seen_paused == [False]


@pytest.mark.anyio
async def test_g14_abandoned_pause_reports_paused(ws: Path) -> None:
    gate = PauseGate()
    gate.pause()
    gate.abandon()
    checkpoints: list[Mapping[str, Any]] = []
    cfg, _ = build(ws, [call("agent_exit", EXIT)], pause=gate, checkpoints=checkpoints)
    result = await run_agent_loop(cfg, "t")
    assert result.status is Status.PAUSED
    assert checkpoints == [], "a paused stop is not an error"


@pytest.mark.anyio
async def test_configured_tool_timeout_wins_over_the_seam(ws: Path) -> None:
    events: list[tuple[str, Mapping[str, Any]]] = []
    cfg, _ = build(
        ws, [call("lab__hang"), call("agent_exit", EXIT)], events=events, tool_timeout=0.05
    )
    await run_agent_loop(cfg, "t")
    timed_out = next(p for k, p in events if k == "tool_result" and p["name"] == "lab__hang")
    assert "within 0.05s" in json.loads(timed_out["content"])["error"]
