"""`yagent fanout` whose reader closes stdout: a real `yagent fanout` process (replayed model
side, real tools, real bwrap), stdout a real pipe closed after the first line — with `--json`
and with the plain display. The run is stopped (the task's next command never runs), one line on
stderr says so, exit 141, no traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from yagent.llm.replay import Recording
from yagent.llm.scripted import call

PLAN = """
[[task]]
name = "slow"
agent = "coding"
task = "Run two commands"
write = ["out"]
"""


@pytest.mark.parametrize("mode", [["--json"], []], ids=["json", "plain"])
def test_a_closed_pipe_stops_the_fanout_with_141(tmp_path: Path, mode: list[str]) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    for d in (".git", "out"):
        (ws / d).mkdir(parents=True)
    home.mkdir()
    rec = Recording()
    rec.add("slow", call("run_bash", json.dumps({"command": "sleep 1; echo one"}), call_id="a"))
    rec.add("slow", call("run_bash", json.dumps({"command": "echo two > out/two.txt"})))
    rec.add("slow", call("agent_exit", json.dumps({"reason": "done", "summary": "ok"})))
    rec.save(tmp_path / "rec.json")
    (tmp_path / "plan.toml").write_text(PLAN)
    env = {**os.environ, "YAGENT_HOME": str(home), "HOME": str(tmp_path)}
    for name in ("YAGENT_PROVIDER", "YAGENT_MODEL", "YAGENT_BASE_URL"):
        env.pop(name, None)
    command = [sys.executable, "-m", "yagent.cli", "fanout", str(tmp_path / "plan.toml")]
    command += ["-C", str(ws), *mode, "-y", "--replay", str(tmp_path / "rec.json")]
    proc = subprocess.Popen(
        command,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        while "run_bash" not in proc.stdout.readline():
            pass
        proc.stdout.close()  # the reader goes away while the first command runs
        _, err = proc.communicate(timeout=90)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)
    assert proc.returncode == 141, err[-3000:]
    assert "Traceback" not in err, err
    assert "stdout was closed" in err, err
    assert not (ws / "out" / "two.txt").exists()  # stopped: the next command never ran
