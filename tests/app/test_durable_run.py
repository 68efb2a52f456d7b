"""Durability wired into real runs: side effects at most once, resume from a checkpoint, drain."""

from __future__ import annotations

import io
import json
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.mcpservers import memory, toml_table
from yagent.agents import catalog
from yagent.app.assemble import App, open_app
from yagent.app.config import load
from yagent.app.durable import Action
from yagent.app.runtrack import continuation_task
from yagent.cli import runner
from yagent.cli.render import Renderer
from yagent.kernel.durable import sideeffect
from yagent.llm.scripted import ScriptedEngine, call
from yagent.llm.types import Request
from yagent.tools.yolo import Yolo

MARKER = catalog.builtin("coding", 0).marker
EFFECT = "./effect.sh"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """A workspace with a side-effect command that counts its runs, and a home configured
    for it (unconfined, so the command writes where the test reads)."""
    ws = tmp_path / "ws"
    ws.mkdir()
    script = ws / "effect.sh"
    script.write_text('#!/bin/sh\necho "run $$" >> "$(dirname "$0")/effects.log"\necho pushed\n')
    script.chmod(0o755)
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text(
        '[agent]\npreset = "yolo"\ndrain_budget = 5\n\n'
        f'[[side_effects]]\nname = "effect"\nprefix = "{EFFECT}"\n'
    )
    return ws


def effects(ws: Path) -> int:
    log = ws / "effects.log"
    return len(log.read_text().splitlines()) if log.exists() else 0


def bash(command: str, call_id: str) -> Any:
    return call("run_bash", json.dumps({"command": command}), call_id=call_id)


EXIT = call("agent_exit", json.dumps({"reason": "done", "summary": "done"}), call_id="exit")


@pytest.fixture
def make_app(ws: Path) -> Callable[..., Any]:
    def make(script: list[Any], **kw: Any) -> Any:
        home = ws.parent / "home"
        engine = ScriptedEngine({"coding": script}, markers={"coding": MARKER})
        app = open_app(
            load(home=home, workspace=ws),
            home=home,
            workspace=ws,
            yolo=Yolo.YOLO,
            interactive=False,
            engine=engine,
            **kw,
        )
        return app, engine

    return make


def kinds(app: App, sid: str, kind: str) -> list[dict[str, Any]]:
    return [e.payload for e in app.store.events(sid) if e.type == kind]


@pytest.mark.anyio
async def test_a_side_effect_runs_once_and_is_recorded(
    ws: Path, make_app: Callable[..., Any]
) -> None:
    cm, _ = make_app([bash(EFFECT, "e1"), bash("ls", "l1"), EXIT])
    async with cm as app:
        sid, result = await app.run("publish", agent_name="coding")
        assert result.status.value == "finished"
        assert effects(ws) == 1
        [event] = kinds(app, sid, "side_effect")
        assert event["outcome"] == "applied"
        assert event["rule"] == "effect"
        record = await app.durable.effects.lookup(event["key"])
        assert record is not None
        assert record.state is sideeffect.State.COMPLETED
        commits = kinds(app, sid, "run_commit")
        assert [c["state"] for c in commits] == ["finished"]
        assert (await app.durable.decide(sid)).action is Action.NEW_TURN


def loaded_names(request: Request) -> set[str]:
    return {str(d.get("name")) for d in request.tools}


@pytest.mark.anyio
async def test_an_interrupted_run_resumes_from_its_checkpoint_without_repeating_effects(
    ws: Path, make_app: Callable[..., Any]
) -> None:
    config = ws.parent / "home" / "config.toml"
    memfile = ws.parent / "memory.jsonl"
    config.write_text(config.read_text() + "\n" + toml_table("demo", memory(memfile)))
    load_tool = call("load_tool", json.dumps({"names": ["demo__create_entities"]}), call_id="lt")
    entity = {"name": "t", "entityType": "ticket", "observations": []}
    ticket = call("demo__create_entities", json.dumps({"entities": [entity]}), call_id="t1")
    # the script runs out after three steps: the model call fails, the run ends as `error`
    cm, _ = make_app([load_tool, bash(EFFECT, "e1"), ticket])
    async with cm as app:
        sid, result = await app.run("publish", agent_name="coding")
        assert result.status.value == "error"
        decision = await app.durable.decide(sid)
        # one checkpoint record, the one resume reads: no second one in sessions.db
        assert app.store.latest_checkpoint(sid) is None
    assert decision.action is Action.CONTINUE
    assert decision.status == "error"
    assert decision.start_step == 4  # three steps, and the one whose model call failed
    # the replayed model side repeats the same call ids: no effect is applied again
    cm, engine = make_app([bash(EFFECT, "e1"), ticket, EXIT])
    async with cm as app:
        _, result = await app.run(continuation_task(decision), session_id=sid, resume=decision)
        assert result.status.value == "finished"
        assert result.steps == 7
        assert effects(ws) == 1
        seen = [(e["name"], e["outcome"]) for e in kinds(app, sid, "side_effect")]
        assert seen == [
            ("run_bash", "applied"),
            ("demo__create_entities", "applied"),
            ("run_bash", "already_done"),
            ("demo__create_entities", "already_done"),
        ]
        assert memfile.read_text().count('"name":"t"') == 1, "the entity was created once"
        assert "demo__create_entities" in loaded_names(engine.requests[0][1])  # tools restored
        assert [e["start_step"] for e in kinds(app, sid, "run_resumed")] == [4]
        assert (await app.durable.decide(sid)).action is Action.NEW_TURN


async def _interrupt_when(path: Path, on_first: Callable[[int], None]) -> None:
    """A Ctrl-C once `path` exists (the tool in flight made it)."""
    with anyio.fail_after(60):
        while not await anyio.Path(path).exists():  # noqa: ASYNC110 - a file, not an event
            await anyio.sleep(0.02)
    on_first(signal.SIGINT)
    await anyio.sleep_forever()


@pytest.mark.anyio
async def test_first_ctrl_c_drains_the_turn_in_flight(
    ws: Path, make_app: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    started, finished = ws / "started", ws / "finished"
    command = f"touch {started}; sleep 0.3; {EFFECT}; touch {finished}"
    monkeypatch.setattr(runner, "_interrupts", lambda first: _interrupt_when(started, first))
    cm, engine = make_app([bash(command, "e1"), EXIT])
    renderer = Renderer(json_mode=True, ask=None, out=io.StringIO())
    async with cm as app:
        sid, result = await runner.run_turn(app, renderer, "publish", None, "coding")
        assert result is not None
        assert result.status.value == "paused"  # stopped at the step boundary
        assert finished.exists()  # what was in flight finished
        assert effects(ws) == 1
        assert len(engine.requests) == 1  # no new step after the stop request
        assert not app.pause.abandoned  # the next turn starts with a fresh gate
        assert (await app.durable.decide(sid)).status == "paused"


@pytest.mark.anyio
async def test_without_a_drain_budget_the_turn_is_stopped_at_once(
    ws: Path, make_app: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    started = ws / "started"
    config = ws.parent / "home" / "config.toml"
    config.write_text(config.read_text().replace("drain_budget = 5", "drain_budget = -1"))
    monkeypatch.setattr(runner, "_interrupts", lambda first: _interrupt_when(started, first))
    cm, _ = make_app([bash(f"touch {started}; sleep 60; {EFFECT}", "e1"), EXIT])
    err = io.StringIO()
    monkeypatch.setattr("sys.stderr", err)
    async with cm as app:
        sid, result = await runner.run_turn(
            app, Renderer(json_mode=True, ask=None, out=io.StringIO()), "x", None, None
        )
        assert result is None
        assert effects(ws) == 0
        assert "was stopped" in err.getvalue()
        # no result, yet the session comes back: the one created before the turn ran
        assert sid == app.store.list_sessions(limit=1)[0].id
        [event] = kinds(app, sid, "side_effect")
        assert event["outcome"] == "uncertain"  # cut mid-command: it may have acted
        decision = await app.durable.decide(sid)
        assert decision.status == "cancelled"


@pytest.mark.anyio
async def test_sigterm_drains_then_shuts_down(
    ws: Path, make_app: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    async def term(on_first: Callable[[int], None]) -> None:
        on_first(signal.SIGTERM)
        await anyio.sleep_forever()

    monkeypatch.setattr(runner, "_interrupts", term)
    cm, _ = make_app([bash("true", "t1"), EXIT])
    async with cm as app:
        with pytest.raises(SystemExit) as stop:
            await runner.run_turn(
                app, Renderer(json_mode=True, ask=None, out=io.StringIO()), "x", None, None
            )
    assert stop.value.code == 143
