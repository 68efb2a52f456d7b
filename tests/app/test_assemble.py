"""The assembled app end to end: scripted model, real tools, real guard, real session store."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.projecttrust import trust_project
from yagent.agents import catalog
from yagent.app.assemble import open_app
from yagent.app.config import load
from yagent.app.recording import recording_of
from yagent.cli.demo import SCRIPT, TASK, prepare
from yagent.llm.replay import ReplayEngine
from yagent.llm.scripted import ScriptedEngine, call, say
from yagent.tools.yolo import Yolo

DEMO = Path(__file__).resolve().parents[2] / "demo"
MARKER = catalog.builtin("coding", 0).marker


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return prepare(DEMO / "project", tmp_path)


@pytest.mark.anyio
async def test_coding_agent_fixes_the_demo_bug_and_the_session_records_it(
    workspace: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    engine = ScriptedEngine({"coding": SCRIPT}, markers={"coding": MARKER})
    async with open_app(
        load(home=home, workspace=workspace),
        home=home,
        workspace=workspace,
        yolo=Yolo.YOLO,
        interactive=False,
        engine=engine,
    ) as app:
        session_id, result = await app.run(TASK, agent_name="coding")
        assert result.status.value == "finished"
        assert result.deliverable
        assert "calc.average" in result.deliverable
        assert "len(values) + 1" not in (workspace / "calc.py").read_text()
        info = app.store.get_session(session_id)
        assert info.status == "finished"
        assert info.meta["agent"] == "coding"
        calls = app.store.tool_calls(session_id)
        assert [c.name for c in calls] == [
            "list_dir",
            "read_file",
            "read_file",
            "run_bash",
            "search_replace_in_file",
            "run_bash",
            "agent_exit",
        ]
        assert all(c.ended_at is not None for c in calls)
        kinds = {e.type for e in app.store.events(session_id)}
        assert {
            "assistant_turn",
            "tool_call",
            "tool_result",
            "sub_agent_activity",
            "run_end",
        } <= kinds
        assert app.store.usage(session_id).input_tokens == 60
        roles = [m["role"] for m in app.store.messages(session_id)]
        assert roles[0] == "user"
        assert roles.count("tool") == 7
        recording, task, agent = recording_of(app.store, session_id)
        assert (task, agent) == (TASK, "coding")
        assert len(recording.steps("coding")) == 6


@pytest.mark.anyio
async def test_replaying_a_session_reports_divergence(workspace: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    engine = ScriptedEngine({"coding": SCRIPT}, markers={"coding": MARKER})
    config = load(home=home, workspace=workspace)
    async with open_app(
        config, home=home, workspace=workspace, yolo=Yolo.YOLO, interactive=False, engine=engine
    ) as app:
        session_id, _ = await app.run(TASK, agent_name="coding")
        recording, _, _ = recording_of(app.store, session_id)
    other = prepare(DEMO / "project", tmp_path / "again")
    (other / "calc.py").write_text((other / "calc.py").read_text() + "\n# extra line\n")
    replay = ReplayEngine(recording, markers={"coding": MARKER})
    config = load(home=home, workspace=other)  # a configuration belongs to its workspace
    async with open_app(
        config, home=home, workspace=other, yolo=Yolo.YOLO, interactive=False, engine=replay
    ) as app:
        _, result = await app.run(TASK, agent_name="coding")
    assert result.status.value == "finished"
    assert any(d.call_id == "c2" for d in replay.divergences), "calc.py read differs"


@pytest.mark.anyio
async def test_without_approval_outside_paths_are_refused(workspace: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    outside = tmp_path / "secret.txt"
    outside.write_text("secret")
    script = [
        call("read_file", json.dumps({"path": str(outside)})),
        call("agent_exit", json.dumps({"reason": "r"})),
    ]
    engine = ScriptedEngine({"coding": script}, markers={"coding": MARKER})
    async with open_app(
        load(home=home, workspace=workspace),
        home=home,
        workspace=workspace,
        interactive=False,
        engine=engine,
    ) as app:
        session_id, result = await app.run("read it", agent_name="coding")
        [first, _] = app.store.tool_calls(session_id)
        assert not first.ok
        assert "outside the workspace" in (first.content or "")
    assert result.status.value == "finished"


@pytest.mark.anyio
async def test_continuing_a_session_sends_its_history(workspace: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    chat_marker = catalog.builtin("chat", 0).marker
    engine = ScriptedEngine(
        {"chat": [say("first answer"), say("second answer")]}, markers={"chat": chat_marker}
    )
    async with open_app(
        load(home=home, workspace=workspace),
        home=home,
        workspace=workspace,
        interactive=False,
        engine=engine,
    ) as app:
        sid, first = await app.run("question one", agent_name="chat")
        assert first.status.value == "answered"
        again, second = await app.run("question two", agent_name="chat", session_id=sid)
        assert again == sid
        sent = engine.requests[1][1].messages
        assert [m.content for m in sent] == ["question one", "first answer", "question two"]
        assert second.text == "second answer"


@pytest.mark.anyio
async def test_hooks_from_config_judge_every_call(workspace: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    (workspace / ".yagent").mkdir()
    (workspace / ".yagent" / "config.toml").write_text(
        '[[hooks]]\nname = "no-shell"\nmatcher = "run_bash"\n'
        'command = "echo no shell >&2; exit 2"\n'
    )
    trust_project(home, workspace)  # hooks from a repository run only once trusted
    script = [
        call("run_bash", json.dumps({"command": "echo hi"})),
        call("agent_exit", json.dumps({"reason": "r"})),
    ]
    engine = ScriptedEngine({"coding": script}, markers={"coding": MARKER})
    async with open_app(
        load(home=home, workspace=workspace),
        home=home,
        workspace=workspace,
        yolo=Yolo.YOLO,
        interactive=False,
        engine=engine,
    ) as app:
        session_id, _ = await app.run("t", agent_name="coding")
        first = app.store.tool_calls(session_id)[0]
        assert not first.ok
        assert "no shell" in (first.content or "")


def test_demo_dir_is_complete() -> None:
    assert (DEMO / "recording.json").is_file()
    assert shutil.which("git"), "the demo needs git"


@pytest.mark.anyio
async def test_every_run_chain_has_the_rings_in_order(workspace: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    engine = ScriptedEngine({"coding": []}, markers={"coding": MARKER})
    async with open_app(
        load(home=home, workspace=workspace),
        home=home,
        workspace=workspace,
        interactive=False,
        engine=engine,
    ) as app:
        names = [s.name for s in app.surface(catalog.builtin("coding", 0)).chain.stages]
    assert names.index("tooldisclose") < names.index("audit") < names.index("workspace_boundary")
    assert names[-1] == "authorization"
