"""Agent e2e chains with the scripted engine through the assembled app: the Repo handoff, the
plain-text nudge, and an interactive session."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from yagent.agents import catalog
from yagent.app.assemble import open_app
from yagent.app.config import load
from yagent.cli.demo import prepare
from yagent.cli.repl import interactive
from yagent.cli.runner import Options
from yagent.kernel.context import reminder
from yagent.llm.scripted import ScriptedEngine, call, say
from yagent.tools.yolo import Yolo

DEMO = Path(__file__).resolve().parents[2] / "demo"
REPO = catalog.builtin("repo", 0)
HANDOFF = {
    "agent": "repo",
    "status": "done",
    "summary": "calc.average divides by len(values) + 1.",
    "confidence": "high",
}


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return prepare(DEMO / "project", tmp_path)


@pytest.mark.anyio
async def test_repo_handoff_after_the_one_time_nudge(workspace: Path, tmp_path: Path) -> None:
    script = [
        call("search", json.dumps({"pattern": "def average"})),
        say("The bug is in calc.average: it divides by len(values) + 1."),
        call(
            "agent_exit",
            json.dumps(
                {
                    "reason": "examined calc.py",
                    "summary": "## Report\nOff-by-one in average.",
                    "handoff": HANDOFF,
                }
            ),
        ),
    ]
    engine = ScriptedEngine({"repo": script}, markers={"repo": REPO.marker})
    home = tmp_path / "home"
    async with open_app(
        load(home=home, workspace=workspace),
        home=home,
        workspace=workspace,
        interactive=False,
        engine=engine,
    ) as app:
        sid, result = await app.run("Where is the bug?", agent_name="repo")
        marker = app.sessions.open(sid).marker  # the session's own band marker
    assert result.status.value == "finished"
    assert result.deliverable == "## Report\nOff-by-one in average."
    assert result.exit_payload is not None
    assert result.exit_payload["handoff"] == HANDOFF
    assert result.report is not None, result.report_note  # the handoff is read with `protocol`
    assert result.report.report.summary == HANDOFF["summary"]
    assert not result.report.repaired
    nudge = engine.requests[2][1].messages[-1]
    with reminder.using(marker):
        assert reminder.unwrap(nudge.content) == REPO.no_action_reminder
    assert reminder.unwrap(nudge.content) is None, "not a band outside its session"
    assert "run_bash" not in {d["name"] for d in engine.requests[0][1].tools}, "Repo is read-only"


@pytest.mark.anyio
async def test_repo_that_never_submits_leaves_a_distinguishable_note(
    workspace: Path, tmp_path: Path
) -> None:
    engine = ScriptedEngine(
        {"repo": [say("report A"), say("report B")]}, markers={"repo": REPO.marker}
    )
    home = tmp_path / "home"
    async with open_app(
        load(home=home, workspace=workspace),
        home=home,
        workspace=workspace,
        interactive=False,
        engine=engine,
    ) as app:
        sid, result = await app.run("Where is the bug?", agent_name="repo")
        events = [e for e in app.store.events(sid) if e.type == "run_end"]
    assert result.deliverable is None
    assert result.text == "report B"
    assert "no deliverable was submitted" in result.note
    assert "no deliverable was submitted" in events[-1].payload["note"]


@pytest.mark.anyio
async def test_interactive_session_continues_and_answers_approvals(
    workspace: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    coding = catalog.builtin("coding", 0)
    outside = tmp_path / "notes.txt"
    outside.write_text("outside the workspace")
    engine = ScriptedEngine(
        {
            "coding": [
                call("read_file", json.dumps({"path": str(outside)}), call_id="r1"),
                call("agent_exit", json.dumps({"reason": "read it", "summary": "first done"})),
                call("agent_exit", json.dumps({"reason": "ok", "summary": "second done"})),
            ]
        },
        markers={"coding": coding.marker},
    )
    from yagent.app import assemble

    original = assemble.open_app

    def with_engine(*args: object, **kwargs: object) -> object:
        kwargs["engine"] = engine
        return original(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr("yagent.cli.runner.open_app", with_engine)
    tasks = iter(["read the notes", "", "and again", None])
    prompts: list[str] = []

    async def read_task() -> str | None:
        return next(tasks)

    async def ask(prompt: str, keys: object) -> str:
        prompts.append(prompt)
        return "y"

    opts = Options(workspace, tmp_path / "home", Yolo.OFF)
    assert await interactive(opts, ask_key=ask, read_line=read_task) == 0
    out = capsys.readouterr().out
    assert "needs your approval" in out
    assert len(prompts) == 1
    assert "first done" in out
    assert "second done" in out
    second = engine.requests[2][1].messages
    assert second[0].content == "read the notes", "the second task continues the session"
