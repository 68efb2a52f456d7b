"""The hook events a one-shot CLI run does not reach, through the real app: `subagent_stop` at
the end of each task of a parallel run, and `pre_compact` before a compaction. Scripted model;
the hooks are real shell commands, the store and the tools are real."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from yagent.app import fanrun
from yagent.app.assemble import open_app
from yagent.app.config import load
from yagent.app.fanout import Assignment
from yagent.app.lanemarkers import marker
from yagent.llm.scripted import ScriptedEngine, call
from yagent.tools.yolo import Yolo

pytestmark = pytest.mark.anyio


def recorder(log: Path, *events: str) -> str:
    """Hooks that each save their stdin as one file in `log` (hooks of parallel tasks run at
    once: one file each, never interleaved lines)."""
    log.mkdir(exist_ok=True)
    command = f'cat > "$(mktemp -p {log} "$(date +%s%N)-XXXX")"'

    return "".join(
        f"[[hooks]]\nname = \"{e}\"\nevent = \"{e}\"\ncommand = '''{command}'''\n" for e in events
    )


def logged(log: Path) -> list[dict[str, Any]]:
    return [json.loads(f.read_text()) for f in sorted(log.iterdir())]


def finish(name: str) -> Any:
    return call("agent_exit", json.dumps({"reason": "ok", "summary": "ok"}), call_id=f"{name}-x")


async def test_each_parallel_task_ends_with_subagent_stop(tmp_path: Path) -> None:
    ws, home, log = tmp_path / "ws", tmp_path / "home", tmp_path / "events"
    for d in (".git", "docs", "src"):
        (ws / d).mkdir(parents=True)
    home.mkdir()
    (home / "config.toml").write_text(recorder(log, "SubagentStop", "stop", "session_start"))
    engine = ScriptedEngine(
        {"a": [finish("a")], "b": [finish("b")]}, markers={n: marker(n) for n in ("a", "b")}
    )
    plan = [
        Assignment("a", "one", agent="chat", write=("docs",)),
        Assignment("b", "two", agent="chat", write=("src",)),
    ]
    async with open_app(
        load(home=home, workspace=ws),
        home=home,
        workspace=ws,
        yolo=Yolo.YOLO,
        interactive=False,
        engine=engine,
    ) as app:
        run = await fanrun.run_parallel(app, plan)
    seen = logged(log)
    assert [s["event"] for s in seen].count("session_start") == 1, "once for the session"
    stops = [s for s in seen if s["event"] != "session_start"]
    assert [s["event"] for s in stops] == ["subagent_stop", "subagent_stop"], "no top-level stop"
    assert {s["hook_event_name"] for s in stops} == {"SubagentStop"}
    assert {s["status"] for s in stops} == {"finished"}
    assert {s["session_id"] for s in stops} == {run.session_id}


STEPS = 40
CONFIG = """
[llm]
max_tokens = 256
[agent]
default = "longrun"
deferred_tools = false
context_window = 4000
compact_at = 0.8
max_tool_output = 2000
[agents.longrun]
prompt = "Work through the task step by step."
tools = ["run_bash"]
max_steps = 60
"""


async def test_pre_compact_runs_before_each_compaction(tmp_path: Path) -> None:
    ws, home, log = tmp_path / "ws", tmp_path / "home", tmp_path / "events"
    ws.mkdir()
    home.mkdir()
    (home / "config.toml").write_text(CONFIG + recorder(log, "PreCompact"))
    steps: list[Any] = [
        call(
            "run_bash", json.dumps({"command": f"seq {i * 1000} {i * 1000 + 80}"}), call_id=f"c{i}"
        )
        for i in range(STEPS)
    ]
    steps.append(call("agent_exit", json.dumps({"reason": "done", "summary": "ran"})))
    engine = ScriptedEngine(
        {"longrun": steps, "summarizer": ["the steps so far printed numbers"] * 50},
        markers={"longrun": "custom agent 'longrun'", "summarizer": "context summarizer"},
    )
    async with open_app(
        load(home=home, workspace=ws),
        home=home,
        workspace=ws,
        yolo=Yolo.YOLO,
        interactive=False,
        engine=engine,
    ) as app:
        sid, result = await app.run("Run the numbered steps.")
        events = [(e.type, e.payload) for e in app.store.events(sid)]
    assert result.status.value == "finished"
    compactions = [p for t, p in events if t == "compaction"]
    assert compactions, "the window was small enough to compact"
    seen = logged(log)
    assert len(seen) == len(compactions), "one pre_compact per compaction"
    assert {(s["event"], s["trigger"]) for s in seen} == {("pre_compact", "auto")}
    kinds = [
        t for t, p in events if t == "compaction" or (t == "hook" and p["event"] == "pre_compact")
    ]
    assert kinds[:2] == ["hook", "compaction"], "the hook ran before the compaction"
