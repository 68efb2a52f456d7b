"""The app's wiring of the context economy, memories and session references into a run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from yagent.agents import catalog
from yagent.app import contextconfig
from yagent.app.assemble import open_app
from yagent.app.config import Config, load
from yagent.app.memories import files
from yagent.kernel.context import spill
from yagent.llm import Message
from yagent.llm.scripted import ScriptedEngine, call
from yagent.memory import SessionStore

MARKER = catalog.builtin("coding", 0).marker
EXIT = json.dumps({"reason": "done", "summary": "the answer is 42"})


def test_context_settings_follow_the_config(tmp_path: Path) -> None:
    config = Config.model_validate(
        {"llm": {"max_tokens": 4000}, "agent": {"context_window": 8000, "max_tool_output": 5000}}
    )
    settings = contextconfig.context_settings(config, state_dir=tmp_path, session_id="s1")
    assert settings.window == 8000
    assert settings.reserve_output == 2000, "at most a quarter of the window"
    assert settings.max_tool_output == 5000
    assert settings.spill_session == "s1"
    assert settings.spill is not None
    assert settings.spill.root == tmp_path / "spill"
    assert settings.offload is not None
    assert settings.offload.min_bytes == contextconfig.OFFLOAD_MIN_BYTES
    out = settings.spill.offer("s1", "z" * 12_000)
    assert out.text.startswith("z" * 4000)
    assert "read_spill(locator=" in out.text
    page = settings.spill.fetch("s1", str(out.locator), 3, 0)
    assert len(page.text) <= 5000
    assert page.count == 5000 // spill.MAX_LINE_CHARS
    unnamed = contextconfig.context_settings(Config(), state_dir=tmp_path, session_id="")
    assert unnamed.spill_session == "run"


def test_the_archiver_stores_whole_messages_and_returns_a_reference(tmp_path: Path) -> None:
    with SessionStore(tmp_path / "s.db") as store:
        sid = store.create_session(workspace="/w", title="t", model="m").id
        archive = contextconfig.archiver(store, sid, "coding")
        ref = archive({"messages": [{"role": "user", "content": "hi"}], "step": 3})
        record = store.archived(sid, "compaction")[0]
    assert ref == f"archive:{record.seq}"
    assert record.payload == {
        "agent": "coding",
        "messages": [{"role": "user", "content": "hi"}],
        "step": 3,
    }


@pytest.mark.anyio
async def test_a_run_gets_memories_session_references_and_keeps_its_live_context(
    tmp_path: Path,
) -> None:
    workspace, home = tmp_path / "ws", tmp_path / "home"
    workspace.mkdir()
    project, user = files(home, workspace)
    project.add("the build command is make check")
    user.add("answer tersely")
    engine = ScriptedEngine(
        {"coding": [call("agent_exit", EXIT)] * 3},
        markers={"coding": MARKER},
    )
    async with open_app(
        load(home=home, workspace=workspace),
        home=home,
        workspace=workspace,
        interactive=False,
        engine=engine,
    ) as app:
        first, _ = await app.run("What is the answer?")
        second, _ = await app.run(f"Use what @session:{first} found.")
        session = app.sessions.open(second)
        assert session.live is not None
        session.live = (*session.live, Message("user", "only in the live context"))
        await app.run("and then?", session_id=second)
        kinds = [e.type for e in app.store.events(second)]
        refs = [e.payload for e in app.store.events(second) if e.type == "session_ref"]
    system = engine.requests[0][1].system
    assert "the build command is make check" in system
    assert "answer tersely" in system
    assert "memory" in kinds
    referenced = engine.requests[1][1].messages[0].content
    assert referenced.startswith(f"Use what @session:{first} found.")
    assert "the answer is 42" in referenced
    assert "state=fresh" in referenced
    assert refs[0]["references"][0]["source"] == first
    continued = engine.requests[2][1].messages
    assert any(m.content == "only in the live context" for m in continued)
