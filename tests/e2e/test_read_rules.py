"""Read rules (`[sandbox] deny_read`, and Claude's `Read(./secrets/**)` imported into it) through
the real product: a `yagent run --json` process against a scripted OpenAI-compatible server, real
bubblewrap. The model asks `read_file`, `search`, `list_dir` and `print_dir_tree` for the hidden
folder and runs `cat secrets/key` in `run_bash`; no result carries the secret, and what it
received says why.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.e2e import conventions
from yagent.llm.scripted import call

SECRET = "TOPSECRET-4417"


def _workspace(tmp_path: Path) -> Path:
    ws = conventions.git_repo(tmp_path / "ws")
    (ws / "secrets").mkdir()
    (ws / "secrets" / "key").write_text(f"{SECRET}\n")
    (ws / "config").mkdir()
    (ws / "config" / "prod.pem").write_text(f"{SECRET}-pem\n")
    (ws / "readme.txt").write_text("a public file\n")
    return ws


TURNS = [
    call("read_file", json.dumps({"path": "secrets/key"}), call_id="read"),
    call("run_bash", json.dumps({"command": "cat secrets/key"}), call_id="cat"),
    call("search", json.dumps({"pattern": "TOPSECRET"}), call_id="search"),
    call("list_dir", json.dumps({"path": "secrets"}), call_id="list"),
    call("print_dir_tree", json.dumps({"path": "."}), call_id="tree"),
    call("read_file", json.dumps({"path": "config/prod.pem"}), call_id="pem"),
    call("run_bash", json.dumps({"command": "cat config/prod.pem"}), call_id="catpem"),
    call("read_file", json.dumps({"path": "readme.txt"}), call_id="open"),
    conventions.EXIT,
]


def _results(received: list[Any]) -> dict[str, str]:
    out: dict[str, str] = {}
    for message in received[-1]["messages"]:
        if message["role"] == "tool":
            content = message["content"]
            text = content if isinstance(content, str) else "".join(p["text"] for p in content)
            out[message["tool_call_id"]] = text
    return out


@pytest.mark.parametrize(
    "rules",
    [
        '["./secrets/**", "config/*.pem"]',  # Claude's spelling: globs relative to the workspace
        '["secrets", "**/*.pem"]',
    ],
)
def test_hidden_paths_are_refused_by_the_file_tools_and_the_sandbox(
    tmp_path: Path, rules: str
) -> None:
    ws = _workspace(tmp_path)
    done = conventions.run(
        tmp_path,
        ["-y", "-C", str(ws), "look around"],
        cwd=ws,
        turns=TURNS,
        extra_config=f"[sandbox]\ndeny_read = {rules}\n",
    )
    assert done.done.returncode == 0, done.done.stdout[-3000:] + done.done.stderr[-3000:]
    results = _results(done.received)
    assert set(results) >= {"read", "cat", "search", "list", "tree", "pem", "catpem", "open"}
    for key, text in results.items():
        assert SECRET not in text, (key, text)
    assert "a public file" in results["open"]  # the rest of the workspace still reads
    assert "hidden" in results["read"] or "deny_read" in results["read"], results["read"]
    tree = json.loads(results["tree"])["tree"]
    assert "secrets/ [hidden]" in tree, tree
    assert "prod.pem [hidden]" in tree, tree
    assert "    key" not in tree  # a hidden folder is named, never opened
    assert json.loads(results["search"])["hidden_files"] == 2


def test_rules_imported_from_claude_hold_in_a_run(tmp_path: Path) -> None:
    """`yagent rules import` writes Claude's `Read(./secrets/**)` and `Bash(curl:*)` deny into
    the project file; without `yagent trust` (they only tighten) a `-y` run honours both."""
    ws = _workspace(tmp_path)
    (ws / "config" / "prod.pem").unlink()  # not denied here
    (ws / ".claude").mkdir()
    settings = {"permissions": {"deny": ["Read(./secrets/**)", "Bash(curl:*)"]}}
    (ws / ".claude" / "settings.json").write_text(json.dumps(settings))
    where = conventions.homes(tmp_path)
    env = {**os.environ, "HOME": str(where.user), "YAGENT_HOME": str(where.yagent)}
    imported = subprocess.run(
        [sys.executable, "-m", "yagent.cli", "rules", "import", "--from", "claude"],
        cwd=ws,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert imported.returncode == 0, imported.stdout + imported.stderr
    assert "2 entries written" in imported.stdout
    turns = [
        TURNS[0],
        TURNS[1],
        TURNS[2],
        call("run_bash", json.dumps({"command": "curl -s http://127.0.0.1:9/"}), call_id="curl"),
        conventions.EXIT,
    ]
    done = conventions.run(tmp_path, ["-y", "-C", str(ws), "look"], cwd=ws, turns=turns)
    assert done.done.returncode == 0, done.done.stdout[-3000:] + done.done.stderr[-3000:]
    results = _results(done.received)
    for key in ("read", "cat", "search"):
        assert SECRET not in results[key], (key, results[key])
    assert "deny_read" in results["read"]
    curl = json.loads(results["curl"])
    assert curl["kind"] == "permission", curl
    assert "claude-deny-curl" in curl["error"], curl
