"""The loop with its context economy: spill before the history, read_spill paging, compaction
through the run's own engine, and final reports read with `protocol`."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from tests.agents.harness import SLOW, build
from yagent.agents.compaction import is_summary
from yagent.agents.economy import ContextSettings
from yagent.agents.loop import run_agent_loop
from yagent.agents.loopconfig import LoopConfig
from yagent.kernel.context.spill import Spill
from yagent.llm import AssistantTurn, Request, ToolCall, Usage
from yagent.llm.scripted import call, say
from yagent.tools import flow
from yagent.tools.adapter import Adapter, ToolContext
from yagent.tools.spillread import read_spill

BIG = "\n".join(f"line {n}" for n in range(1500))
LOCATOR = re.compile(r"locator=(sp-[0-9a-f]+)")
EXIT = json.dumps({"reason": "done", "summary": "S" * 5000})


async def big_read(ctx: ToolContext, args: Any) -> dict[str, Any]:
    return {"text": BIG}


def with_economy(
    cfg: LoopConfig, tmp_path: Path, *, window: int = 100_000, **options: Any
) -> list[Mapping[str, Any]]:
    store = Spill(tmp_path / "spill", limit=2000, page_size=1, page_cap=1)
    ctx = ToolContext(tmp_path, cfg.adapter.surface, session_id="s1", spill=store)
    executors = {
        SLOW.name: big_read,
        "read_spill": read_spill,
        "agent_exit": flow.agent_exit,
        "think": flow.think,
    }
    cfg.adapter = Adapter(ctx, executors)
    cfg.context = ContextSettings(
        window=window, max_tool_output=2000, spill=store, spill_session="s1", **options
    )
    archives: list[Mapping[str, Any]] = []

    def archive(payload: Mapping[str, Any]) -> str:
        archives.append(payload)
        return f"archive:{len(archives)}"

    cfg.archive = archive
    return archives


def page_two(request: Request) -> AssistantTurn:
    match = LOCATOR.search(request.messages[-1].content)
    assert match is not None
    args = json.dumps({"locator": match.group(1), "page": 2, "count": 0})
    return AssistantTurn("", (ToolCall("r1", "read_spill", args),), Usage(10, 5))


@pytest.mark.anyio
async def test_a_big_output_is_spilled_before_the_history_and_paged_back(tmp_path: Path) -> None:
    events: list[tuple[str, Mapping[str, Any]]] = []
    cfg, engine = build(
        tmp_path,
        [call(SLOW.name, "{}", call_id="b1"), page_two, call("agent_exit", EXIT)],
        events=events,
    )
    with_economy(cfg, tmp_path)
    result = await run_agent_loop(cfg, "read it")
    assert result.status.value == "finished"
    assert result.deliverable == "S" * 5000, "the deliverable comes from the uncut result"
    cut = engine.requests[1][1].messages[-1]
    full = json.dumps({"text": BIG})
    assert cut.content.startswith(full[:2000])
    assert len(cut.content) < 2400
    results = [p for k, p in events if k == "tool_result"]
    assert results[0]["spilled"]["stored"]
    assert results[0]["content"] == cut.content
    paged = json.loads(engine.requests[2][1].messages[-1].content)
    assert paged["text"] == full[2000:4000]
    assert paged["clamped"] == "count defaulted to 1"
    assert paged["next"] == {"page": 3, "count": 1}
    assert "spilled" not in results[1], "the spill reader's pages are never cut again"
    contexts = [p for k, p in events if k == "context"]
    assert [c["step"] for c in contexts] == [1, 2, 3]


@pytest.mark.anyio
async def test_compaction_uses_the_runs_engine_and_counts_its_usage(tmp_path: Path) -> None:
    events: list[tuple[str, Mapping[str, Any]]] = []
    turns: list[AssistantTurn] = []
    steps: list[Any] = [
        call("think", json.dumps({"thought": "x" * 3000}), call_id=f"t{i}") for i in range(8)
    ]
    steps.append(call("agent_exit", json.dumps({"reason": "done", "summary": "ok"})))
    cfg, engine = build(tmp_path, steps, events=events, on_turn=turns.append, max_steps=12)
    engine.scripts = {**engine.scripts, "summarizer": [say("so far: thoughts")] * 5}
    engine.markers = {**engine.markers, "summarizer": "context summarizer"}
    archives = with_economy(cfg, tmp_path, window=6000, keep_recent=2)
    result = await run_agent_loop(cfg, "think a lot")
    assert result.status.value == "finished"
    compactions = [p for k, p in events if k == "compaction"]
    assert compactions
    assert all(c["compacted"] for c in compactions)
    assert all(c["agent"] == "coding" and c["delegation_id"] == "deleg-1" for c in compactions)
    summarised = [r for ident, r in engine.requests if ident == "summarizer"]
    assert len(summarised) == len(compactions) == len(archives)
    assert len(turns) == 9 + len(summarised), "summariser turns are accounted too"
    assert result.usage.input_tokens == 10 * len(turns)
    assert any(is_summary(m) for m in result.messages)
    for ident, request in engine.requests:
        if ident == "coding":
            ids = {c.id for m in request.messages for c in m.tool_calls}
            assert ids == {m.tool_call_id for m in request.messages if m.role == "tool"}


REPORT = {
    "status": "done",
    "summary": "Off-by-one in average.",
    "findings": [{"title": "divides by len+1", "severity": "high"}],
    "confidence": "high",
}


@pytest.mark.anyio
async def test_a_handoff_is_read_as_a_report_beside_the_deliverable(tmp_path: Path) -> None:
    events: list[tuple[str, Mapping[str, Any]]] = []
    exit_args = json.dumps({"reason": "r", "summary": "## Report", "handoff": REPORT})
    cfg, _ = build(tmp_path, [call("agent_exit", exit_args)], name="repo", events=events)
    result = await run_agent_loop(cfg, "find the bug")
    assert result.deliverable == "## Report"
    assert result.report is not None
    assert result.report.report.agent == "repo"
    assert result.report.report.confidence == "high"
    event = next(p for k, p in events if k == "report")
    assert event["source"] == "handoff"
    assert event["report"]["findings"][0]["severity"] == "high"


@pytest.mark.anyio
async def test_a_repaired_report_in_the_last_reply_is_marked_low(tmp_path: Path) -> None:
    events: list[tuple[str, Mapping[str, Any]]] = []
    text = (
        'Here: {"agent": "coding", "status": "done", "summary": "fixed it", "confidence": "high",}'
    )
    cfg, _ = build(tmp_path, [say(text)], events=events, no_action_retry_limit=0)
    result = await run_agent_loop(cfg, "t")
    assert result.deliverable is None
    assert result.report is not None
    assert result.report.repaired
    assert result.report.report.confidence == "low"
    assert next(p for k, p in events if k == "report")["source"] == "text"


@pytest.mark.anyio
async def test_plain_deliverables_have_no_report_and_no_event(tmp_path: Path) -> None:
    events: list[tuple[str, Mapping[str, Any]]] = []
    cfg, _ = build(tmp_path, [call("agent_exit", EXIT)], events=events)
    result = await run_agent_loop(cfg, "t")
    assert result.report is None
    assert result.report_note == ""
    assert not [k for k, _ in events if k == "report"]
