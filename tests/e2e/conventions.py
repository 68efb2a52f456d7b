"""A `yagent run --json` process against a recording OpenAI-compatible server, with a person's
home and yagent's home both in temp dirs — for the tests of what other tools' conventions bring.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.e2e.test_providers import openai_reply
from tests.llm.wire import WireServer
from yagent.llm.scripted import call
from yagent.llm.types import AssistantTurn

EXIT = call("agent_exit", json.dumps({"reason": "done", "summary": "ok"}), call_id="x1")


@dataclass
class Homes:
    user: Path  # $HOME: ~/.claude lives here
    yagent: Path  # $YAGENT_HOME


@dataclass
class Run:
    done: subprocess.CompletedProcess[str]
    received: list[Any]

    @property
    def system(self) -> str:
        first = self.received[0]["messages"][0]
        assert first["role"] == "system"
        return str(first["content"])

    def events(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.done.stdout.splitlines() if line.startswith("{")]


def homes(tmp_path: Path) -> Homes:
    user, home = tmp_path / "user", tmp_path / "yhome"
    user.mkdir(exist_ok=True)
    home.mkdir(exist_ok=True)
    return Homes(user, home)


def run(
    tmp_path: Path,
    args: Sequence[str],
    *,
    cwd: Path,
    turns: Sequence[AssistantTurn] = (EXIT,),
    extra_config: str = "",
) -> Run:
    where = homes(tmp_path)
    with WireServer([openai_reply(t) for t in turns]) as server:
        (where.yagent / "config.toml").write_text(
            f'[llm]\nprovider = "openai"\nmodel = "gpt-test"\nbase_url = "{server.url}/v1"\n'
            f"step_retries = 0\n{extra_config}"
        )
        env = {
            **os.environ,
            "HOME": str(where.user),
            "YAGENT_HOME": str(where.yagent),
            "OPENAI_API_KEY": "sk-test-not-real",
        }
        for name in ("YAGENT_PROVIDER", "YAGENT_MODEL", "YAGENT_BASE_URL"):
            env.pop(name, None)
        done = subprocess.run(
            [sys.executable, "-m", "yagent.cli", "run", "--json", *args],
            env=env,
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=110,
        )
        return Run(done, [r.body for r in server.received])


def git_repo(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(path)], check=True, timeout=30)
    return path
