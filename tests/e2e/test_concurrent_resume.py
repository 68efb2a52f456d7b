"""Issue 14, item 3: two `yagent resume SID` at once. The second is refused (exit 2, one line
naming the holder) while the first is inside a tool call, and writes nothing: the call is not
settled as dead, the stored history keeps one result per call id and no repeated turn."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from yagent.llm.replay import Recording
from yagent.llm.scripted import call
from yagent.memory import SessionStore

EXIT = json.dumps({"reason": "done", "summary": "done"})
BLOCK = json.dumps(
    {"command": "touch started; for i in $(seq 1 1200); do [ -e go ] && break; sleep 0.05; done"}
)


def recording(tmp: Path, name: str, *turns: object) -> str:
    rec = Recording()
    for turn in turns:
        rec.add("coding", turn)  # type: ignore[arg-type]
    path = tmp / name
    rec.save(path)
    return str(path)


def yagent(args: list[str], home: Path, ws: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "yagent.cli", *args],
        env={**os.environ, "YAGENT_HOME": str(home)},
        cwd=ws,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def messages(home: Path, sid: str) -> list[dict[str, object]]:
    with SessionStore(home / "sessions.db") as store:
        return store.messages(sid)


@pytest.mark.timeout(180)
def test_a_second_resume_of_a_running_session_is_refused_and_writes_nothing(
    tmp_path: Path,
) -> None:
    home, ws = tmp_path / "home", tmp_path / "ws"
    home.mkdir()
    ws.mkdir()
    (home / "config.toml").write_text('[agent]\npreset = "yolo"\n')
    first = recording(tmp_path, "a.json", call("run_bash", '{"command": "true"}', call_id="a"))
    made = yagent(["run", "--json", "-y", "--replay", first, "go"], home, ws)
    made.communicate(timeout=120)
    assert made.returncode == 1  # the recording ran out: the run is interrupted
    with SessionStore(home / "sessions.db") as store:
        sid = store.list_sessions(limit=1)[0].id

    blocking = recording(
        tmp_path,
        "b.json",
        call("run_bash", BLOCK, call_id="blocked"),
        call("agent_exit", EXIT, call_id="x"),
    )
    runner = yagent(["resume", sid, "--json", "-y", "--replay", blocking], home, ws)
    try:
        deadline = time.monotonic() + 120
        while not (ws / "started").exists():
            assert runner.poll() is None, runner.communicate()
            assert time.monotonic() < deadline, "the first resume never reached its tool call"
            time.sleep(0.05)
        before = messages(home, sid)
        second = recording(tmp_path, "c.json", call("agent_exit", EXIT, call_id="y"))
        other = yagent(["resume", sid, "--json", "-y", "--replay", second], home, ws)
        out, err = other.communicate(timeout=120)
        assert other.returncode == 2, (out, err)
        assert f"already running in another yagent process (pid {runner.pid} " in err
        assert "Traceback" not in err
        assert messages(home, sid) == before, "the refused runner wrote nothing"
    finally:
        (ws / "go").touch()
    out, err = runner.communicate(timeout=120)
    assert runner.returncode == 0, err

    stored = messages(home, sid)
    results = [m["tool_call_id"] for m in stored if m["role"] == "tool"]
    assert sorted(results) == ["a", "blocked", "x"], "one result per call id"
    assert not any("INTERRUPTED" in str(m["content"]) for m in stored if m["role"] == "tool")
    turns = [json.dumps(m.get("tool_calls")) for m in stored if m["role"] == "assistant"]
    assert len(turns) == len(set(turns)), "no assistant turn stored twice"
