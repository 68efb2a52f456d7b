"""`yagent` with MCP servers configured, as a person runs it: a bad `[mcp.X]` table is a
configuration error (exit 2, one line, no traceback); `doctor` connects to each server and shows
its status; an unreachable server is a notice and the run still ends with its JSON result."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.test_providers import openai_reply
from tests.llm.wire import WireServer
from tests.mcpservers import everything_stdio, free_port, toml_table
from yagent.llm.scripted import call

pytestmark = pytest.mark.timeout(180)


def yagent(home: Path, ws: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "YAGENT_HOME": str(home), "OPENAI_API_KEY": "sk-test-not-real"}
    env["COLUMNS"] = "400"  # doctor's table on one line per row
    for name in ("YAGENT_PROVIDER", "YAGENT_MODEL", "YAGENT_BASE_URL"):
        env.pop(name, None)
    return subprocess.run(
        [sys.executable, "-m", "yagent.cli", *argv],
        env=env,
        capture_output=True,
        text=True,
        timeout=150,
    )


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    home, ws = tmp_path / "home", tmp_path / "ws"
    home.mkdir()
    ws.mkdir()
    return home, ws


@pytest.mark.parametrize(
    ("table", "says"),
    [
        ('args = ["x"]', "exactly one of 'command' (stdio) or 'url' (HTTP)"),
        ('url = "http://127.0.0.1:1/mcp"\ntool_timeout = -1', "'tool_timeout' must be positive"),
        ('command = "x"\nheaders = { A = "b" }', "'headers' need a 'url' server"),
    ],
)
def test_bad_mcp_table_is_a_config_error(dirs: tuple[Path, Path], table: str, says: str) -> None:
    home, ws = dirs
    (home / "config.toml").write_text(f"[mcp.bad]\n{table}\n")
    for argv in (("run", "--json", "-C", str(ws), "x"), ("doctor",)):
        done = yagent(home, ws, *argv)
        if argv[0] == "run":
            assert done.returncode == 2, done.stderr
        assert says in done.stderr + done.stdout
        assert "mcp.bad" in done.stderr + done.stdout
        assert "Traceback" not in done.stderr


def test_doctor_shows_each_server(dirs: tuple[Path, Path]) -> None:
    home, ws = dirs
    gone = {"url": f"http://127.0.0.1:{free_port()}/mcp", "startup_timeout": 5}
    (home / "config.toml").write_text(
        toml_table("ev", everything_stdio()) + toml_table("gone", gone)
    )
    done = yagent(home, ws, "doctor")
    out = " ".join(done.stdout.split())
    assert "mcp ev" in out
    assert "tools, protocol 2025-11-25" in out
    assert "mcp gone" in out
    assert "unavailable" in out
    assert "Traceback" not in done.stderr


def test_unreachable_http_server_does_not_end_the_run(dirs: tuple[Path, Path]) -> None:
    home, ws = dirs
    gone = {"url": f"http://127.0.0.1:{free_port()}/mcp", "startup_timeout": 5}
    turns = [
        call("gone__anything", "{}", call_id="g"),
        call("agent_exit", json.dumps({"reason": "done", "summary": "ok"}), call_id="x"),
    ]
    with WireServer([openai_reply(t) for t in turns]) as server:
        (home / "config.toml").write_text(
            f'[llm]\nprovider = "openai"\nmodel = "m"\nbase_url = "{server.url}/v1"\n'
            "step_retries = 0\n" + toml_table("gone", gone)
        )
        done = yagent(home, ws, "run", "--json", "-y", "-C", str(ws), "go")
    assert done.returncode == 0, done.stderr[-3000:]
    lines = [json.loads(x) for x in done.stdout.splitlines() if x.startswith("{")]
    notices = [line["text"] for line in lines if line["type"] == "notice"]
    assert any(n.startswith("MCP server gone unavailable:") for n in notices), notices
    assert any(line["type"] == "result" for line in lines) or lines[-1]["type"] != "notice"
    assert "Traceback" not in done.stderr
