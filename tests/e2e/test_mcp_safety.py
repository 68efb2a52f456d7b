"""MCP tools under yagent's judgement, through the real product: a `yagent run --json` process
against a scripted OpenAI-compatible server, with the real third-party MCP servers
(server-filesystem, server-memory, server-everything) configured in `[mcp.*]`.

Each case is the hole the issue found: the read-only Repo agent, the `read-only` preset, an
open-world tool under --json without -y, and a refused (-32602) call to a mutating tool that must
settle as *not applied*, never "outcome unknown".
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_providers import openai_reply
from tests.llm.wire import WireServer
from tests.mcpservers import everything_stdio, filesystem, memory, toml_table
from yagent.llm.scripted import call

pytestmark = pytest.mark.timeout(180)
SEED = {
    "type": "entity",
    "name": "keep",
    "entityType": "note",
    "observations": ["precious"],
}


def run(
    tmp_path: Path, turns: list[Any], *, extra: str = "", flags: tuple[str, ...] = ("-y",)
) -> tuple[subprocess.CompletedProcess[str], list[dict[str, Any]]]:
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    memfile = tmp_path / "memory.jsonl"
    if not memfile.exists():
        memfile.write_text(json.dumps(SEED) + "\n")
    with WireServer([openai_reply(t) for t in turns]) as server:
        config = (
            f'[llm]\nprovider = "openai"\nmodel = "gpt-test"\nbase_url = "{server.url}/v1"\n'
            f"step_retries = 0\n[agent]\ndeferred_tools = false\n{extra}\n"
            + toml_table("fs", filesystem(ws))
            + toml_table("memory", memory(memfile))
            + toml_table("ev", everything_stdio())
        )
        (home / "config.toml").write_text(config)
        env = {**os.environ, "YAGENT_HOME": str(home), "OPENAI_API_KEY": "sk-test-not-real"}
        for name in ("YAGENT_PROVIDER", "YAGENT_MODEL", "YAGENT_BASE_URL"):
            env.pop(name, None)
        done = subprocess.run(
            [sys.executable, "-m", "yagent.cli", "run", "--json", *flags, "-C", str(ws), "go"],
            env=env,
            capture_output=True,
            text=True,
            timeout=150,
        )
    lines = [json.loads(x) for x in done.stdout.splitlines() if x.strip().startswith("{")]
    return done, lines


def results(lines: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {line["call_id"]: line for line in lines if line.get("type") == "tool_result"}


def exit_turn() -> Any:
    return call("agent_exit", json.dumps({"reason": "done", "summary": "x"}), call_id="x")


WRITE = call("fs__write_file", json.dumps({"path": "new.txt", "content": "hi"}), call_id="w")
DELETE = call("memory__delete_entities", json.dumps({"entityNames": ["keep"]}), call_id="d")
CREATE = call(
    "memory__create_entities",
    json.dumps({"entities": [{"name": "n", "entityType": "t", "observations": []}]}),
    call_id="c",
)
READ = call("memory__read_graph", "{}", call_id="r")


def test_repo_agent_gets_only_read_only_mcp_tools(tmp_path: Path) -> None:
    done, lines = run(tmp_path, [WRITE, DELETE, READ, exit_turn()], flags=("-y", "--agent", "repo"))
    assert done.returncode == 0, done.stderr[-3000:]
    got = results(lines)
    assert not got["w"]["ok"]
    assert not got["d"]["ok"]
    assert got["r"]["ok"], got["r"]  # what the MCP server said, if it failed
    assert "precious" in got["r"]["content"]
    assert not (tmp_path / "ws" / "new.txt").exists()
    assert "precious" in (tmp_path / "memory.jsonl").read_text()


def test_read_only_preset_denies_mcp_writers_like_builtin_ones(tmp_path: Path) -> None:
    builtin = call("write_file", json.dumps({"path": "b.txt", "content": "x"}), call_id="b")
    done, lines = run(
        tmp_path, [builtin, WRITE, CREATE, READ, exit_turn()], extra='preset = "read-only"'
    )
    assert done.returncode == 0, done.stderr[-3000:]
    got = results(lines)
    for refused in ("b", "w", "c"):
        body = json.loads(got[refused]["content"])
        assert not got[refused]["ok"]
        assert body["stage"] == "command_policy", body
        assert "read-only" in body["error"]
    assert got["r"]["ok"]
    assert not (tmp_path / "ws" / "new.txt").exists()
    assert '"n"' not in (tmp_path / "memory.jsonl").read_text()


def test_coding_agent_under_y_writes_and_side_effects_are_recorded(tmp_path: Path) -> None:
    bad = call("memory__create_entities", json.dumps({"entities": "no"}), call_id="bad")
    done, lines = run(tmp_path, [WRITE, CREATE, bad, exit_turn()])
    assert done.returncode == 0, done.stderr[-3000:]
    got = results(lines)
    assert got["w"]["ok"]
    assert (tmp_path / "ws" / "new.txt").read_text() == "hi"
    assert got["c"]["ok"]
    effects = {e["call_id"]: e for e in lines if e.get("type") == "side_effect"}
    assert effects["c"]["rule"] == "mcp-mutating"
    assert effects["c"]["outcome"] == "applied"
    # -32602 from a mutating tool: refused before it ran ⇒ failed (not applied), not uncertain
    assert effects["bad"]["outcome"] == "failed", effects["bad"]
    assert "OUTCOME UNKNOWN" not in got["bad"]["content"]
    assert json.loads(got["bad"]["content"])["kind"] == "invalid_args"


def test_open_world_tool_needs_a_person_and_json_without_y_refuses(tmp_path: Path) -> None:
    gzip = call(
        "ev__gzip-file-as-resource",
        json.dumps({"name": "x.gz", "data": "http://127.0.0.1:9/secret"}),
        call_id="g",
    )
    echo = call("ev__echo", json.dumps({"message": "hello"}), call_id="e")
    done, lines = run(tmp_path, [gzip, echo, exit_turn()], flags=())
    assert done.returncode == 0, done.stderr[-3000:]
    got = results(lines)
    assert not got["g"]["ok"]
    assert "openWorldHint" in got["g"]["content"]
    assert got["e"]["ok"]
    assert "hello" in got["e"]["content"]
