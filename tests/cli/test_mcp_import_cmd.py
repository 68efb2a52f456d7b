"""`yagent mcp import` and the workspace's `.mcp.json`, through a real `yagent` subprocess with a
fake HOME holding Claude Desktop's and Codex's files: what is imported, what is skipped and why,
trust, clashes, dry runs, malformed files; and `.mcp.json` read at start once trusted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.test_mcp_cmd import SECRET, TIME, Env, _run_calling_time
from tests.e2e.test_providers import openai_reply
from tests.llm.wire import WireServer
from yagent.llm.scripted import call

pytestmark = pytest.mark.timeout(180)


@pytest.fixture
def y(tmp_path: Path) -> Env:
    return Env(tmp_path)


def _dot_mcp(y: Env, servers: dict[str, object]) -> Path:
    path = y.ws / ".mcp.json"
    path.write_text(json.dumps({"mcpServers": servers}, indent=2))
    return path


def test_dot_mcp_json_is_refused_until_trusted_then_imported(y: Env) -> None:
    _dot_mcp(
        y,
        {
            "time": {"command": TIME[0], "args": TIME[1:], "env": {"TZ_TOKEN": SECRET}},
            "docs": {
                "type": "http",
                "url": "http://127.0.0.1:9/mcp",
                "headers": {"Authorization": "Bearer ${DOCS_TOKEN}", "X-Team": SECRET},
            },
            "legacy": {"type": "sse", "url": "http://127.0.0.1:9/sse"},
            "expand": {"command": "srv", "env": {"KEY": "${MY_KEY}"}},
        },
    )
    refused = y("mcp", "import")
    assert refused.returncode == 2
    assert ".mcp.json comes with the repository and is not trusted" in refused.stderr
    assert "yagent trust" in refused.stderr
    project = y.ws / ".yagent" / "config.toml"
    assert not project.exists()

    shown = y("trust", "--show").stdout  # the review names the servers, secrets masked
    assert ".mcp.json: not trusted" in shown
    assert "mcp.time" in shown
    assert SECRET not in shown
    assert y("trust", "--yes").returncode == 0

    dry = y("mcp", "import", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "would import  time" in dry.stdout
    assert "nothing written" in dry.stdout
    assert not project.exists()

    done = y("mcp", "import")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "imported      time" in out
    assert "imported      docs" in out
    assert "skipped       legacy  the SSE transport is not supported" in out
    assert "skipped       expand  'env' uses ${VAR} expansion" in out
    assert "imported 2 of 4" in out
    assert y.servers(project)["docs"] == {
        "url": "http://127.0.0.1:9/mcp",
        "headers": {"Authorization": "Bearer ${DOCS_TOKEN}", "X-Team": SECRET},
    }
    again = y("mcp", "import")  # everything that could be imported already is: nothing new
    assert again.returncode == 1
    assert "skipped       time    already configured here (--replace overwrites)" in again.stdout
    assert y("mcp", "import", "--replace").returncode == 0


def test_dot_mcp_json_servers_load_at_start_only_once_trusted(y: Env) -> None:
    _dot_mcp(y, {"clock": {"command": TIME[0], "args": TIME[1:]}})
    listed = y("mcp", "list").stdout
    assert "clock" in listed
    assert ".mcp.json" in listed
    assert "not loaded: project not trusted — run `yagent trust`" in listed
    _, got = _run_calling_time(y, "clock")
    assert "datetime" not in got  # not connected: withheld
    assert y("trust", "--yes").returncode == 0
    status, got = _run_calling_time(y, "clock")
    assert status == 0
    assert "datetime" in got
    remove = y("mcp", "remove", "clock")
    assert remove.returncode == 2
    assert "yagent does not edit that file" in remove.stderr


def test_withheld_dot_mcp_json_is_named_at_start(y: Env) -> None:
    _dot_mcp(y, {"clock": {"command": TIME[0], "args": TIME[1:]}})
    turn = call("agent_exit", json.dumps({"reason": "done", "summary": "ok"}), call_id="x")
    with WireServer([openai_reply(turn)]) as server:
        y.user_config.write_text(
            f'[llm]\nprovider = "openai"\nmodel = "m"\nbase_url = "{server.url}/v1"\n'
        )
        done = y("run", "--json", "x")
    notices = [json.loads(x) for x in done.stdout.splitlines() if x.startswith("{")]
    said = " ".join(n.get("text", "") for n in notices if n.get("type") == "notice")
    assert ".mcp.json (not trusted): mcp.clock" in said


def test_import_claude_desktop_from_the_fake_home(y: Env) -> None:
    desktop = y.fake_home / ".config" / "Claude" / "claude_desktop_config.json"
    desktop.parent.mkdir(parents=True)
    desktop.write_text(
        json.dumps(
            {
                "globalShortcut": "Ctrl+Space",
                "mcpServers": {
                    "fs": {"command": "npx", "args": ["-y", "server-filesystem", "/tmp"]},
                    "bad name": {"command": "x"},
                },
            }
        )
    )
    done = y("mcp", "import", "--from", "claude-desktop")
    assert done.returncode == 0, done.stderr
    assert "skipped       bad name  name 'bad name' must be letters" in done.stdout
    assert y.servers()["fs"] == {"command": "npx", "args": ["-y", "server-filesystem", "/tmp"]}
    assert "fs" in y("mcp", "list").stdout


def test_import_codex_maps_timeouts_and_bearer_token(y: Env) -> None:
    codex = y.fake_home / ".codex" / "config.toml"
    codex.parent.mkdir()
    codex.write_text(
        'model = "o4-mini"\n'
        "[mcp_servers.local]\n"
        f'command = "srv"\nargs = ["--x"]\nenv = {{ TOKEN = "{SECRET}" }}\n'
        "startup_timeout_sec = 20\ntool_timeout_sec = 90\n"
        "[mcp_servers.remote]\n"
        'url = "https://example.test/mcp"\nbearer_token_env_var = "REMOTE_TOKEN"\n'
        '[mcp_servers.off]\ncommand = "x"\nenabled = false\n'
        '[mcp_servers.picky]\ncommand = "x"\nenabled_tools = ["a"]\n'
    )
    done = y("mcp", "import", "--from", "codex", "--scope", "user")
    assert done.returncode == 0, done.stderr
    assert "skipped       off     disabled in the Codex file" in done.stdout
    assert "skipped       picky   'enabled_tools': tool filters are not supported" in done.stdout
    servers = y.servers()
    assert servers["local"] == {
        "command": "srv",
        "args": ["--x"],
        "env": {"TOKEN": SECRET},
        "startup_timeout": 20,
        "tool_timeout": 90,
    }
    assert servers["remote"] == {
        "url": "https://example.test/mcp",
        "headers": {"Authorization": "Bearer ${REMOTE_TOKEN}"},
    }
    assert SECRET not in y("mcp", "list", "--json").stdout


def test_import_from_a_named_file_and_malformed_files(y: Env) -> None:
    good = y.ws.parent / "other.json"
    good.write_text(json.dumps({"mcpServers": {"one": {"command": "srv"}}}))
    assert y("mcp", "import", "--from", str(good)).returncode == 0
    assert y.servers()["one"] == {"command": "srv"}

    cases = {
        "trailing.json": ('{"mcpServers": {"a": {"command": "x"},}}', "not valid JSON: line 1"),
        "list.json": ('{"mcpServers": ["a"]}', "'mcpServers' must be a table of servers"),
        "entry.json": ('{"mcpServers": {"a": "x"}}', "mcpServers.a must be an object"),
        "codex.toml": ("[mcp_servers.a]\ncommand = \n", "not valid TOML"),
        "codex2.toml": ('[mcp_servers]\na = "x"\n', "mcp_servers.a must be an object"),
    }
    for name, (text, says) in cases.items():
        path = y.ws.parent / name
        path.write_text(text)
        done = y("mcp", "import", "--from", str(path))
        assert done.returncode == 2, name
        assert str(path) in done.stderr, name
        assert says in done.stderr, (name, done.stderr)
    missing = y("mcp", "import", "--from", "codex")
    assert missing.returncode == 2
    assert "no such file" in missing.stderr


def test_malformed_dot_mcp_json_is_a_configuration_error(y: Env) -> None:
    (y.ws / ".mcp.json").write_text('{"mcpServers": {\n  "a": {"command": "x"},\n}}')
    for argv in (("run", "x"), ("mcp", "list")):
        done = y(*argv)
        assert done.returncode == 2, argv
        assert ".mcp.json: not valid JSON: line 3 column 1" in done.stderr, done.stderr
