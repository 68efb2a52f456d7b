"""Roots, elicitation and sampling through the real product: `yagent run --json` against a
scripted OpenAI-compatible server, with the real server-everything configured in `[mcp.*]`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_providers import anthropic_reply, openai_reply
from tests.llm.wire import Received, WireServer
from tests.mcpservers import everything_stdio, toml_table
from yagent.llm.scripted import call
from yagent.llm.types import AssistantTurn
from yagent.memory import SessionStore

pytestmark = pytest.mark.timeout(180)


def run(
    tmp_path: Path,
    turns: list[AssistantTurn],
    table: dict[str, Any],
    flags: tuple[str, ...],
    task: str = "go",
    *,
    provider: str = "openai",
    llm: str = "",
) -> tuple[subprocess.CompletedProcess[str], list[dict[str, Any]], list[Received]]:
    """One `yagent run --json` in a fresh workspace and home; `llm`: more `[llm]` lines."""
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    home.mkdir()
    reply = anthropic_reply if provider == "anthropic" else openai_reply
    with WireServer([reply(t) for t in turns]) as server:
        base = server.url if provider == "anthropic" else f"{server.url}/v1"
        (home / "config.toml").write_text(
            f'[llm]\nprovider = "{provider}"\nmodel = "m-test"\nbase_url = "{base}"\n{llm}\n'
            "step_retries = 0\n[agent]\ndeferred_tools = false\n" + toml_table("ev", table)
        )
        env = {
            **os.environ,
            "YAGENT_HOME": str(home),
            "OPENAI_API_KEY": "sk-test-not-real",
            "ANTHROPIC_API_KEY": "sk-ant-test-not-real",
        }
        for name in ("YAGENT_PROVIDER", "YAGENT_MODEL", "YAGENT_BASE_URL"):
            env.pop(name, None)
        done = subprocess.run(
            [sys.executable, "-m", "yagent.cli", "run", "--json", *flags, "-C", str(ws), task],
            env=env,
            capture_output=True,
            text=True,
            timeout=150,
        )
        received = list(server.received)
    lines = [json.loads(x) for x in done.stdout.splitlines() if x.strip().startswith("{")]
    return done, lines, received


def results(lines: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {line["call_id"]: line for line in lines if line.get("type") == "tool_result"}


EXIT = call("agent_exit", json.dumps({"reason": "done", "summary": "x"}), call_id="x")
ROOTS = call("ev__get-roots-list", "{}", call_id="roots")
ELICIT = call("ev__trigger-elicitation-request", "{}", call_id="el")


def test_roots_and_elicitation_under_json_and_y(tmp_path: Path) -> None:
    done, lines, _ = run(tmp_path, [ROOTS, ELICIT, EXIT], everything_stdio(), ("-y",))
    assert done.returncode == 0, done.stderr[-3000:]
    got = results(lines)
    assert got["roots"]["ok"]
    assert (tmp_path / "ws").resolve().as_uri() in got["roots"]["content"]
    # -y answers yagent's own questions, never a server's request for the person's data
    assert "declined" in got["el"]["content"]
    said = [x for x in lines if x.get("type") == "mcp_request"]
    assert said[0]["request"] == "elicitation"
    assert said[0]["outcome"] == "declined"


def test_sampling_is_off_unless_enabled(tmp_path: Path) -> None:
    sample = call("ev__trigger-sampling-request", json.dumps({"prompt": "p"}), call_id="s")
    done, lines, received = run(tmp_path, [sample, EXIT], everything_stdio(), ("-y",))
    assert done.returncode == 0, done.stderr[-3000:]
    assert not results(lines)["s"]["ok"]  # not offered: the capability was never declared
    assert len(received) == 2


def test_sampling_runs_on_the_session_engine_and_is_counted(tmp_path: Path) -> None:
    sample = call("ev__trigger-sampling-request", json.dumps({"prompt": "p"}), call_id="s")
    sampled = AssistantTurn("sampled words")
    table = {**everything_stdio(), "sampling": True}
    done, lines, received = run(tmp_path, [sample, sampled, EXIT], table, ("-y",))
    assert done.returncode == 0, done.stderr[-3000:]
    got = results(lines)
    assert got["s"]["ok"], got["s"]
    assert "sampled words" in got["s"]["content"]
    asked = received[1].body
    assert asked["messages"][0] == {"role": "system", "content": "You are a helpful test server."}
    assert "tools" not in asked  # the server's prompt only: no yagent context, no tools
    assert len(asked["messages"]) == 2
    result = next(x for x in lines if x.get("type") == "result")
    store = SessionStore(tmp_path / "home" / "sessions.db")
    try:
        usage = store.usage(result["session_id"])
    finally:
        store.close()
    assert usage.input_tokens == 300  # the agent's two turns and the sampled one


def test_sampling_under_json_without_y_is_refused(tmp_path: Path) -> None:
    sample = call("ev__trigger-sampling-request", json.dumps({"prompt": "p"}), call_id="s")
    table = {**everything_stdio(), "sampling": True}
    done, lines, received = run(tmp_path, [sample, EXIT], table, ())
    assert done.returncode == 0, done.stderr[-3000:]
    got = results(lines)
    assert not got["s"]["ok"]
    # the tool is open-world: refused before it runs, so the server never gets to ask
    assert "nobody could be asked" in got["s"]["content"]
    assert len(received) == 2  # the model was never asked on the server's behalf
