"""Issue 14, item 6: a summariser that always fails cannot snowball. A long session through the
real app and session store: compaction backs off, truncates with a visible note, archives only
what leaves — the store grows with the content, and requests stay inside the window."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_long_session import assert_paired, bash
from tests.projecttrust import trust_project
from yagent.agents.compaction import is_summary
from yagent.app.assemble import open_app
from yagent.app.config import load
from yagent.kernel.context import reminder
from yagent.llm import AssistantTurn, Request
from yagent.llm.scripted import ScriptedEngine, call
from yagent.memory import message_body
from yagent.tools.yolo import Yolo

STEPS = 150
WINDOW = 4000
MARKER = "custom agent 'longrun'"
CONFIG = f"""
[llm]
max_tokens = 256
[agent]
default = "longrun"
deferred_tools = false
context_window = {WINDOW}
compact_at = 0.8
max_tool_output = 2000
[agents.longrun]
prompt = "Work through the task step by step."
tools = ["run_bash"]
max_steps = {STEPS + 10}
"""


def script() -> list[Any]:
    steps: list[Any] = [bash(f"seq {i * 1000} {i * 1000 + 80}", f"c{i}") for i in range(STEPS)]
    steps.append(call("agent_exit", json.dumps({"reason": "done", "summary": "all steps ran"})))
    return steps


def failing(attempts: list[int]) -> list[Any]:
    def summarise(request: Request) -> AssistantTurn:
        attempts.append(len(request.messages[0].content))
        raise RuntimeError("summariser down")

    return [summarise] * 200


@pytest.mark.anyio
@pytest.mark.timeout(120)
async def test_a_failing_summariser_backs_off_and_the_store_grows_with_the_content(
    tmp_path: Path,
) -> None:
    workspace, home = tmp_path / "ws", tmp_path / "home"
    (workspace / ".yagent").mkdir(parents=True)
    (workspace / ".yagent" / "config.toml").write_text(CONFIG)
    trust_project(home, workspace)
    attempts: list[int] = []
    engine = ScriptedEngine(
        {"longrun": script(), "summarizer": failing(attempts)},
        markers={"longrun": MARKER, "summarizer": "You are the context summarizer"},
    )
    async with open_app(
        load(home=home, workspace=workspace),
        home=home,
        workspace=workspace,
        yolo=Yolo.YOLO,
        interactive=False,
        engine=engine,
    ) as app:
        sid, result = await app.run("Run the numbered steps.")
        events = app.store.events(sid)
        stored = [message_body(m) for m in app.store.messages(sid)]
        archives = app.store.archived(sid, "compaction")
        marker = app.sessions.open(sid).marker
    assert result.status.value == "finished", result.error

    compactions = [e.payload for e in events if e.type == "compaction"]
    assert len(compactions) >= 7
    assert all(c["compacted"] and c["truncated"] for c in compactions)
    assert "summariser down" in compactions[0]["error"]
    assert len(attempts) <= 1 + math.log2(len(compactions) + 1), "backed off, not every step"
    with reminder.using(marker):  # the session's bands carry its own marker
        notes = [m for m in result.messages if is_summary(m)]
        assert notes
        assert "WITHOUT a summary" in (reminder.unwrap(notes[0].content) or "")

    contexts = [e.payload for e in events if e.type == "context"]
    assert max(c["total"] for c in contexts) <= contexts[0]["window"]
    for ident, request in engine.requests:
        if ident == "longrun":
            assert_paired(request.messages)

    # each message is archived once: the archive is the content once, not once per step
    content = sum(len(json.dumps(m, ensure_ascii=False)) for m in stored)
    archived = sum(len(json.dumps(a.payload["messages"], ensure_ascii=False)) for a in archives)
    assert archived <= 1.2 * content
    size = sum(f.stat().st_size for f in home.glob("sessions.db*"))
    assert size <= 8 * content + 512 * 1024, (size, content)
