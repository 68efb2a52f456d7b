"""A run killed (SIGKILL) in its fourth step resumes after the three it finished: each step's
checkpoint was written when that step began — the step, not the run — so nothing a finished
step did is done again, and the step in flight is settled, not re-run.

A real `yagent run` in a subprocess with a recorded model side: steps 1–3 each append a line to
`steps.log` with `run_bash` (a command outside the side-effect store: a repeat would show as a
second line), step 4 starts a command that never ends. Then `yagent resume` of the session.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest

from yagent.kernel.durable import checkpoint
from yagent.llm.replay import Recording
from yagent.llm.scripted import call
from yagent.memory import SessionStore

EXIT = json.dumps({"reason": "done", "summary": "three steps and a wait"})


def bash(line: str) -> str:
    return json.dumps({"command": line, "timeout": 600})


@pytest.fixture
def world(tmp_path: Path) -> dict[str, Path]:
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    home.mkdir()
    (home / "config.toml").write_text('[agent]\npreset = "yolo"\n')  # no sandbox to outlive
    return {"ws": ws, "home": home, "tmp": tmp_path}


def yagent(args: list[str], world: dict[str, Path]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "yagent.cli", *args],
        env={**os.environ, "YAGENT_HOME": str(world["home"])},
        cwd=world["ws"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its group: the command it left running is ended with it
    )


def recording(world: dict[str, Path], name: str, *turns: object) -> Path:
    rec = Recording()
    for turn in turns:
        rec.add("coding", turn)  # type: ignore[arg-type]
    path = world["tmp"] / name
    rec.save(path)
    return path


async def _stored(home: Path, run_id: str) -> checkpoint.RunProgress | None:
    store = checkpoint.SqliteStore(home / "durable.db")
    try:
        return await store.load(run_id)
    finally:
        store.close()


@pytest.mark.timeout(300)
def test_a_run_killed_mid_step_resumes_after_the_steps_it_finished(
    world: dict[str, Path],
) -> None:
    log, started = world["ws"] / "steps.log", world["ws"] / "started"
    steps = [
        call("run_bash", bash(f"echo step{n} >> steps.log"), call_id=f"s{n}") for n in (1, 2, 3)
    ]
    wait = call("run_bash", bash("touch started && sleep 300"), call_id="wait")
    first = recording(world, "run.json", *steps, wait)
    proc = yagent(["run", "--json", "-y", "--replay", str(first), "three steps"], world)
    try:
        deadline = time.monotonic() + 120
        while not started.exists():  # step 4's command runs; steps 1–3 are behind it
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "step 4 never started"
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=60)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)  # the `sleep` the dead run left behind
    assert log.read_text().splitlines() == ["step1", "step2", "step3"]
    with SessionStore(world["home"] / "sessions.db") as store:
        sid = store.list_sessions(limit=1)[0].id
    saved = anyio.run(_stored, world["home"], f"{sid}:coding:1")
    assert saved is not None  # written step by step: the dead process left steps 1–3 finished
    assert [(s.id, s.status.value) for s in saved.steps] == [
        ("1", "completed"),
        ("2", "completed"),
        ("3", "completed"),
        ("4", "running"),
    ]

    again = recording(world, "resume.json", call("agent_exit", EXIT, call_id="exit"))
    resumed = yagent(["resume", sid, "--json", "-y", "--replay", str(again)], world)
    out, err = resumed.communicate(timeout=120)
    assert resumed.returncode == 0, err
    assert "resume decision: continue the interrupted run" in err
    assert "it continues at step 5" in err
    assert "step 4 was in flight" in err
    events = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    settled = [(e["call_id"], e["outcome"]) for e in events if e["type"] == "tool_settled"]
    assert settled == [("wait", "interrupted")]  # settled, not run again
    ran = [e["call_id"] for e in events if e["type"] == "tool_call"]
    assert ran == ["exit"]  # no finished step's call is made again
    assert log.read_text().splitlines() == ["step1", "step2", "step3"]
    result = next(e for e in events if e["type"] == "result")
    assert result["status"] == "finished"
