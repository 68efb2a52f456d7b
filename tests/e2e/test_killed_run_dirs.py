"""A `yagent run` killed outright (SIGKILL: the OOM killer, `kill -9`) cannot remove its session
sandbox's socket directory (`yagent-jobs-*` under /run/user/<uid> or /tmp); the next run does.
Normal ends, SIGINT and SIGTERM remove it themselves (checked by hand with the same harness:
`close`/`close_now`). Real `yagent` subprocesses against the scripted OpenAI-compatible server."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.e2e.test_providers import openai_reply
from tests.llm.wire import WireServer
from yagent.llm.scripted import call, calls

SRC = str(Path(__file__).resolve().parents[2] / "src")


def start(tmp_path: Path, name: str, command: str) -> tuple[WireServer, subprocess.Popen[bytes]]:
    home, ws = tmp_path / name / "home", tmp_path / name / "ws"
    home.mkdir(parents=True)
    ws.mkdir()
    turns = [
        calls([("run_bash", json.dumps({"command": command}), "c0")]),
        call("agent_exit", json.dumps({"reason": "done"}), call_id="x"),
    ]
    server = WireServer([openai_reply(t) for t in turns]).__enter__()
    (home / "config.toml").write_text(
        f'[llm]\nprovider = "openai"\nmodel = "gpt-test"\nbase_url = "{server.url}/v1"\n'
        "step_retries = 0\n"
    )
    env = {**os.environ, "YAGENT_HOME": str(home), "HOME": str(tmp_path / name)}
    env |= {"OPENAI_API_KEY": "sk-test-not-real", "PYTHONPATH": SRC}
    for drop in ("YAGENT_PROVIDER", "YAGENT_MODEL", "YAGENT_BASE_URL"):
        env.pop(drop, None)
    argv = [sys.executable, "-m", "yagent.cli", "run", "--json", "-y", "-C", str(ws), "go"]
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    return server, proc


def socket_dir_of(proc: subprocess.Popen[bytes]) -> tuple[Path, int]:
    """The socket directory a running yagent's foreground command was entered through, and the
    pid of the sandbox process listening on it."""
    deadline = time.monotonic() + 60
    while proc.poll() is None and time.monotonic() < deadline:
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                argv = (entry / "cmdline").read_bytes().split(b"\0")
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            if ppid == proc.pid and b"--socket" in argv:
                return Path(argv[argv.index(b"--socket") + 1].decode()).parent, int(entry.name)
        time.sleep(0.05)
    raise AssertionError("the run never entered its session sandbox")


def gone(pid: int, within: float = 60.0) -> None:
    """Wait until process `pid` has exited: a directory whose socket still has a listener is in
    use and is never swept (`tools.jobs.sweep_stale`)."""
    deadline = time.monotonic() + within
    while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not Path(f"/proc/{pid}").exists(), f"the killed run's sandbox {pid} outlived it"


def test_the_next_run_removes_what_a_killed_run_left(tmp_path: Path) -> None:
    server, killed = start(tmp_path, "first", "sleep 60")
    try:
        left, listener = socket_dir_of(killed)
        killed.send_signal(signal.SIGKILL)
        killed.wait(timeout=30)
        gone(listener)  # the sandbox follows its dead parent; until then its socket is live
    finally:
        if killed.poll() is None:
            killed.kill()
            killed.wait()
        server.__exit__(None, None, None)
    assert left.exists(), "the killed run could not remove it (the case under test)"
    server, next_run = start(tmp_path, "second", "echo hi")
    try:
        assert next_run.wait(timeout=120) == 0, next_run.stderr.read() if next_run.stderr else ""
    finally:
        if next_run.poll() is None:
            next_run.kill()
            next_run.wait()
        server.__exit__(None, None, None)
    assert not left.exists(), f"{left} was left behind by a killed run and never swept"
