"""`yagent resume` (the decision it prints and acts on) and `yagent reconcile`, in process."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from yagent.app.durable import Action, Durable
from yagent.cli import main
from yagent.kernel.durable import sideeffect
from yagent.llm.replay import Recording
from yagent.llm.scripted import call
from yagent.memory import SessionStore
from yagent.tools.effectrun import idempotency_key

EXIT = json.dumps({"reason": "done", "summary": "done"})


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    h = tmp_path / "home"
    h.mkdir()
    (h / "config.toml").write_text('[agent]\npreset = "yolo"\n')
    monkeypatch.setenv("YAGENT_HOME", str(h))
    for name in ("YAGENT_PROVIDER", "YAGENT_MODEL", "YAGENT_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    return h


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    w = tmp_path / "ws"
    w.mkdir()
    monkeypatch.chdir(w)
    return w


def rec(tmp_path: Path, name: str, *turns: Any) -> str:
    recording = Recording()
    for turn in turns:
        recording.add("coding", turn)
    path = tmp_path / name
    recording.save(path)
    return str(path)


def last_session(home: Path) -> str:
    with SessionStore(home / "sessions.db") as store:
        return store.list_sessions(limit=1)[0].id


def test_resume_continues_an_interrupted_run_and_not_a_finished_one(
    home: Path, ws: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the recording ends after one step: the next model call fails and the run ends as error
    first = rec(tmp_path, "a.json", call("run_bash", json.dumps({"command": "true"}), call_id="a"))
    assert main(["run", "--json", "-y", "-C", str(ws), "--replay", first, "go"]) == 1
    sid = last_session(home)
    capsys.readouterr()
    second = rec(tmp_path, "b.json", call("agent_exit", EXIT, call_id="x"))
    assert main(["resume", sid[:10], "--json", "-y", "--replay", second]) == 0
    captured = capsys.readouterr()
    assert "resume decision: continue the interrupted run" in captured.err
    assert "interrupted (error) after 2 step(s)" in captured.err
    result = json.loads(captured.out.splitlines()[-2])  # before the replay report
    assert result["status"] == "finished"
    assert result["steps"] == 3
    # now it concluded: nothing to continue without a prompt
    assert main(["resume", sid, "--json"]) == 0
    captured = capsys.readouterr()
    assert "resume decision: new turn" in captured.err
    assert "nothing to continue" in captured.err


def test_interactive_resume_hands_the_decision_to_the_session(
    home: Path, ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = rec(tmp_path, "a.json", call("run_bash", json.dumps({"command": "true"}), call_id="a"))
    main(["run", "--json", "-y", "-C", str(ws), "--replay", first, "go"])
    seen: list[dict[str, Any]] = []

    async def interactive(opts: object, **kw: Any) -> int:
        seen.append(kw)
        return 0

    monkeypatch.setattr("yagent.cli.repl.interactive", interactive)
    monkeypatch.setattr(sys.stdin, "isatty", lambda: True)  # the prompt is for a terminal
    assert main(["resume"]) == 0
    assert seen[0]["resume"].action is Action.CONTINUE
    assert seen[0]["session_id"] == last_session(home)


def uncertain(home: Path, sid: str, call_id: str) -> str:
    """An intent whose process is gone and whose lease lapsed: it needs reconciliation."""

    async def make() -> str:
        durable = Durable(home / "durable.db")
        try:
            key = idempotency_key(sid, "", call_id)
            await durable.effects.acquire(sideeffect.Action(key, key), "h:1:x", 0.001)
            return key
        finally:
            durable.close()

    return anyio.run(make)


def test_reconcile_lists_and_resolves_side_effects_of_unknown_outcome(
    home: Path, ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with SessionStore(home / "sessions.db") as store:
        sid = store.create_session(workspace=str(ws)).id
        other = store.create_session(workspace=str(ws)).id
        store.record_tool_call(
            sid, call_id="p", name="run_bash", arguments='{"command": "git push"}', started_at=1.0
        )
    key = uncertain(home, sid, "p")
    elsewhere = uncertain(home, other, "q")
    assert main(["reconcile", sid]) == 0
    out = capsys.readouterr().out
    assert f"UNCERTAIN {key}" in out
    assert "git push" in out
    assert elsewhere not in out
    assert main(["reconcile", "--json"]) == 0
    assert {r["key"] for r in json.loads(capsys.readouterr().out)} == {key, elsewhere}
    assert main(["reconcile", "--applied", key, "--not-applied", key]) == 2
    assert main(["reconcile", "--applied", "nope"]) == 2
    assert main(["reconcile", "--applied", key.split("/")[0][:4]]) == 2  # matches two
    assert main(["reconcile", "--not-applied", elsewhere]) == 0
    assert "resolved — resolved: not applied" in capsys.readouterr().out
    assert main(["reconcile", "--applied", key]) == 0
    with SessionStore(home / "sessions.db") as store:
        [event] = [e.payload for e in store.events(sid) if e.type == "side_effect"]
    assert event["outcome"] == "reconciled"
    assert event["applied"] is True

    async def check() -> tuple[Any, Any]:
        durable = Durable(home / "durable.db")
        try:
            return await durable.effects.lookup(key), await durable.effects.lookup(elsewhere)
        finally:
            durable.close()

    applied, withdrawn = anyio.run(check)
    assert applied.state is sideeffect.State.COMPLETED
    assert withdrawn.state is sideeffect.State.WITHDRAWN
    assert main(["reconcile"]) == 0
    assert "no side effect needs reconciliation" in capsys.readouterr().out
