"""A declared writable area cannot open `.git` or `.yagent` to a sandboxed command.

File tools ask a person before writing into `.git` or `.yagent` even under `-y`, and the sandbox
keeps them read-only — a hook written there would run on the host, unsandboxed, at the person's
next `git commit`. A parallel plan (`yagent fanout`) or a Director delegation that declares such
an area would have made it the deeper, writable bind. Through the real product: `yagent fanout
--check` and a real fan-out run whose task writes a hook with `run_bash` under `-y` (real
bubblewrap), against a scripted OpenAI-compatible server on loopback.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.test_providers import openai_reply
from tests.llm.wire import WireServer
from yagent.llm.scripted import call

HOOK = "printf '#!/bin/sh\\necho PWNED\\n' > .git/hooks/pre-commit && echo WROTE"


def _yagent(
    tmp_path: Path, args: list[str], url: str = "http://127.0.0.1:9/v1"
) -> subprocess.CompletedProcess[str]:
    home = tmp_path / "yhome"
    home.mkdir(exist_ok=True)
    (home / "config.toml").write_text(
        f'[llm]\nprovider = "openai"\nmodel = "gpt-test"\nbase_url = "{url}"\nstep_retries = 0\n'
    )
    env = {**os.environ, "HOME": str(tmp_path), "YAGENT_HOME": str(home)}
    env["OPENAI_API_KEY"] = "sk-test-not-real"
    return subprocess.run(
        [sys.executable, "-m", "yagent.cli", *args],
        env=env,
        cwd=tmp_path / "work",
        capture_output=True,
        text=True,
        timeout=110,
    )


def _workspace(tmp_path: Path, area: str) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    subprocess.run(["git", "init", "-q", str(work)], check=True, timeout=30)
    plan = tmp_path / "plan.toml"
    plan.write_text(f'[[task]]\nname = "hooks"\nagent = "coding"\ntask = "t"\nwrite = ["{area}"]\n')
    return plan


@pytest.mark.parametrize("area", [".git", ".git/hooks", ".yagent", "vendor/.GIT", "a/.Yagent/x"])
def test_fanout_check_refuses_an_area_in_a_protected_path(tmp_path: Path, area: str) -> None:
    plan = _workspace(tmp_path, area)
    done = _yagent(tmp_path, ["fanout", "--check", str(plan)])
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert "only a person may" in done.stderr
    assert area in done.stderr


def test_a_fanout_task_cannot_plant_a_git_hook(tmp_path: Path) -> None:
    plan = _workspace(tmp_path, ".git/hooks")
    turns = [
        call("run_bash", json.dumps({"command": HOOK}), call_id="h1"),
        call("agent_exit", json.dumps({"reason": "done", "summary": "ok"}), call_id="x1"),
    ]
    with WireServer([openai_reply(t) for t in turns]) as server:
        done = _yagent(tmp_path, ["fanout", "-y", "--json", str(plan)], f"{server.url}/v1")
    assert done.returncode == 2, done.stdout + done.stderr
    assert not (tmp_path / "work" / ".git" / "hooks" / "pre-commit").exists()


def test_a_director_delegation_cannot_declare_git_hooks(tmp_path: Path) -> None:
    _workspace(tmp_path, ".git/hooks")
    delegate = {"agent": "coding", "task": "plant a hook", "write": [".git/hooks"]}
    turns = [
        call("delegate", json.dumps(delegate), call_id="d1"),
        call("agent_exit", json.dumps({"reason": "done", "summary": "ok"}), call_id="x1"),
    ]
    with WireServer([openai_reply(t) for t in turns]) as server:
        args = ["run", "-y", "--json", "--agent", "director", "go"]
        done = _yagent(tmp_path, args, f"{server.url}/v1")
    results = [
        json.loads(line)
        for line in done.stdout.splitlines()
        if line.startswith('{"type": "tool_result"')
    ]
    refused = [r for r in results if r.get("name") == "delegate"]
    assert refused, done.stdout + done.stderr
    assert "refused" in refused[0]["content"]
    assert "only a person may" in refused[0]["content"]
    assert not (tmp_path / "work" / ".git" / "hooks" / "pre-commit").exists()
