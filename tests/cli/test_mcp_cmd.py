"""`yagent mcp add|list|get|remove|import` as a person runs them: a real `yagent` subprocess with
a temporary YAGENT_HOME and a fake HOME, the configuration files read back, and the added server
connected in a real run (the scripted model calls its tool; the test reads what the model got)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.e2e.test_providers import openai_reply
from tests.llm.wire import WireServer
from yagent.llm.scripted import call

pytestmark = pytest.mark.timeout(180)
SECRET = "s3cret-value-never-shown"
TIME = [sys.executable, "-m", "mcp_server_time", "--local-timezone", "UTC"]


class Env:
    def __init__(self, tmp_path: Path) -> None:
        self.home, self.ws, self.fake_home = tmp_path / "yh", tmp_path / "ws", tmp_path / "fh"
        for d in (self.home, self.ws, self.fake_home):
            d.mkdir()
        self.user_config = self.home / "config.toml"

    def __call__(self, *argv: str, **extra: str) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "YAGENT_HOME": str(self.home), "HOME": str(self.fake_home)}
        env |= {"OPENAI_API_KEY": "sk-test-not-real", "COLUMNS": "200", **extra}
        for name in ("YAGENT_PROVIDER", "YAGENT_MODEL", "YAGENT_BASE_URL", "XDG_CONFIG_HOME"):
            env.pop(name, None)
        env.pop("CODEX_HOME", None)
        done = subprocess.run(
            [sys.executable, "-m", "yagent.cli", *argv],
            env=env,
            cwd=self.ws,
            capture_output=True,
            text=True,
            timeout=150,
        )
        assert "Traceback" not in done.stderr, done.stderr
        return done

    def servers(self, path: Path | None = None) -> dict[str, dict[str, object]]:
        data = tomllib.loads((path or self.user_config).read_text())
        return dict(data.get("mcp", {}))


@pytest.fixture
def y(tmp_path: Path) -> Env:
    return Env(tmp_path)


def _run_calling_time(y: Env, server_name: str = "time") -> tuple[int, str]:
    """A real run whose model calls the server's get_current_time (twice: a deferred tool's
    schema is loaded by the first call); what the model got back the second time."""
    tool = f"{server_name}__get_current_time"
    turns = [
        call(tool, '{"timezone": "UTC"}', call_id="t0"),
        call(tool, '{"timezone": "UTC"}', call_id="t"),
        call("agent_exit", json.dumps({"reason": "done", "summary": "ok"}), call_id="x"),
    ]
    with WireServer([openai_reply(t) for t in turns]) as server:
        llm = f'[llm]\nprovider = "openai"\nmodel = "m"\nbase_url = "{server.url}/v1"\n'
        text = y.user_config.read_text() if y.user_config.exists() else ""
        y.user_config.write_text(llm + text)
        done = y("run", "--json", "-y", "what time is it")
        y.user_config.write_text(text)
    assert len(server.received) >= 3, done.stdout[-3000:] + done.stderr[-2000:]
    messages = server.received[2].body["messages"]
    tool_messages = [m for m in messages if m.get("tool_call_id") == "t"]
    return done.returncode, json.dumps(tool_messages)


def test_add_list_connect_remove(y: Env) -> None:
    y.user_config.write_text("# my settings\n[agent]\ntool_timeout = 99.0  # keep me\n")
    done = y("mcp", "add", "time", "--env", f"TOKEN={SECRET}", "--", *TIME)
    assert done.returncode == 0, done.stderr
    assert "added MCP server time (user)" in done.stdout
    text = y.user_config.read_text()
    assert "# my settings" in text
    assert "tool_timeout = 99.0  # keep me" in text
    assert y.servers()["time"] == {"command": TIME[0], "args": TIME[1:], "env": {"TOKEN": SECRET}}

    listed = y("mcp", "list")
    assert listed.returncode == 0
    assert "time" in listed.stdout
    assert "user" in listed.stdout
    assert "stdio" in listed.stdout
    assert "mcp_server_time" in listed.stdout
    as_json = json.loads(y("mcp", "list", "--json").stdout)
    assert as_json[0]["env"] == {"TOKEN": "***"}
    assert as_json[0]["loaded"] is True
    for argv in (("mcp", "list"), ("mcp", "list", "--json"), ("mcp", "get", "time")):
        assert SECRET not in y(*argv).stdout

    status, got = _run_calling_time(y)
    assert status == 0
    assert "UTC" in got
    assert "datetime" in got  # the real server's answer reached the model

    gone = y("mcp", "remove", "time")
    assert gone.returncode == 0, gone.stderr
    assert "time" not in y.servers()
    assert "tool_timeout = 99.0  # keep me" in y.user_config.read_text()
    assert "no MCP servers configured" in y("mcp", "list").stdout


def test_http_server_headers_masked_and_url_userinfo_hidden(y: Env) -> None:
    url = "http://user:pw-hidden@127.0.0.1:9/mcp"
    done = y("mcp", "add", "docs", url, "-H", f"Authorization: Bearer {SECRET}")
    assert done.returncode == 0, done.stderr
    assert y.servers()["docs"] == {"url": url, "headers": {"Authorization": f"Bearer {SECRET}"}}
    for argv in (("mcp", "list"), ("mcp", "get", "docs"), ("mcp", "list", "docs", "--json")):
        out = y(*argv).stdout
        assert SECRET not in out
        assert "pw-hidden" not in out
        assert "http://127.0.0.1:9/mcp" in out
    assert "Authorization=***" in y("mcp", "get", "docs").stdout


def test_add_refuses_what_the_loader_refuses_with_its_message(y: Env, tmp_path: Path) -> None:
    y.user_config.write_text("[llm]\nmodel = 'm'\n")
    before = y.user_config.read_bytes()
    added = y("mcp", "add", "bad", "--tool-timeout", "-1", "--force", "--", "x")
    assert added.returncode == 2
    assert y.user_config.read_bytes() == before  # nothing written
    # the same table written by hand: `yagent run` refuses it with the same words
    y.user_config.write_text("[llm]\nmodel = 'm'\n[mcp.bad]\ncommand = 'x'\ntool_timeout = -1.0\n")
    ran = y("run", "x")
    assert ran.returncode == 2
    said = "mcp.bad: 'tool_timeout' must be positive, not -1.0"
    assert said in added.stderr
    assert said in ran.stderr


def test_add_clash_replace_and_bad_input(y: Env) -> None:
    assert y("mcp", "add", "a", "--force", "--", "one").returncode == 0
    clash = y("mcp", "add", "a", "--force", "--", "two")
    assert clash.returncode == 2
    assert "already" in clash.stderr
    assert "--replace" in clash.stderr
    assert y.servers()["a"]["command"] == "one"
    assert y("mcp", "add", "a", "--replace", "--force", "--", "two").returncode == 0
    assert y.servers()["a"]["command"] == "two"
    for argv, says in (
        (("mcp", "add", "a.b", "--force", "--", "x"), "letters, digits"),
        (("mcp", "add", "c"), "missing COMMAND"),
        (("mcp", "add", "c", "--url", "http://h/mcp", "--force", "--", "x"), "give the URL once"),
        (("mcp", "add", "c", "--transport", "stdio", "--url", "http://h/mcp"), "--url is for"),
        (("mcp", "add", "c", "-H", "no-colon", "--url", "http://h/mcp"), "NAME: VALUE"),
        (("mcp", "add", "c", "-e", "NOEQUALS", "--force", "--", "x"), "KEY=VALUE"),
        (("mcp", "add", "c", "-H", "A: b", "--force", "--", "x"), "'headers' need a 'url' server"),
    ):
        done = y(*argv)
        assert done.returncode == 2, (argv, done.stdout)
        assert says in done.stderr, (argv, done.stderr)
    assert set(y.servers()) == {"a"}


def test_a_stdio_command_that_does_not_resolve_is_refused_unless_forced(y: Env) -> None:
    y.user_config.write_text("[llm]\nmodel = 'm'\n")
    before = y.user_config.read_bytes()
    for missing in ("no-such-mcp-server-cmd", str(y.ws / "absent-server"), "./absent-server"):
        done = y("mcp", "add", "m", "--", missing, "--stdio")
        assert done.returncode == 2, done.stdout
        assert f"{missing!r} is not a command on PATH" in done.stderr
        assert "--force" in done.stderr
        assert y.user_config.read_bytes() == before  # nothing written
    not_executable = y.ws / "server.py"
    not_executable.write_text("print()\n")
    done = y("mcp", "add", "m", "--", str(not_executable))
    assert done.returncode == 2
    assert "not executable" in done.stderr
    # what resolves is added: a name on PATH (this PATH), an executable path
    assert y("mcp", "add", "onpath", "--", "true").returncode == 0
    assert y("mcp", "add", "bypath", "--", sys.executable, "-m", "x").returncode == 0
    # the server's own PATH (--env PATH=…) is where its command is looked up
    bin_dir = y.ws / "bin"
    bin_dir.mkdir()
    tool = bin_dir / "my-mcp"
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    assert y("mcp", "add", "own", "-e", f"PATH={bin_dir}", "--", "my-mcp").returncode == 0
    assert y("mcp", "add", "nopath", "--", "my-mcp").returncode == 2
    # --force adds it anyway, saying it does not resolve yet
    forced = y("mcp", "add", "later", "--force", "--", "no-such-mcp-server-cmd")
    assert forced.returncode == 0, forced.stderr
    assert "does not resolve" in forced.stdout + forced.stderr
    assert y.servers()["later"]["command"] == "no-such-mcp-server-cmd"
    # URL servers are not looked up
    assert y("mcp", "add", "web", "http://127.0.0.1:9/mcp").returncode == 0
    assert set(y.servers()) == {"onpath", "bypath", "own", "later", "web"}


def test_remove_unknown_names_the_nearest(y: Env) -> None:
    assert y("mcp", "add", "github", "--force", "--", "gh-mcp").returncode == 0
    done = y("mcp", "remove", "githb")
    assert done.returncode == 2
    assert "no MCP server named 'githb' (did you mean 'github'?)" in done.stderr
    assert y("mcp", "get", "gihub").returncode == 2


def test_project_scope_waits_for_trust_and_own_edits_keep_it(y: Env) -> None:
    project = y.ws / ".yagent" / "config.toml"
    project.parent.mkdir()
    project.write_text("[agent]\nmax_parallel_tools = 2\n")  # the repository's, not trusted
    assert y("mcp", "add", "p", "--scope", "project", "--force", "--", "srv").returncode == 0
    assert y.servers(project)["p"] == {"command": "srv"}
    listed = y("mcp", "list").stdout
    assert "project" in listed
    assert "not loaded: project not trusted — run `yagent trust`" in listed
    assert json.loads(y("mcp", "list", "--json").stdout)[0]["loaded"] is False
    assert y("trust", "--yes").returncode == 0
    assert "not loaded" not in y("mcp", "list").stdout
    # the person's own edit of a trusted file keeps it trusted
    assert y("mcp", "add", "q", "--scope", "project", "--force", "--", "srv2").returncode == 0
    assert y("mcp", "remove", "p").returncode == 0
    rows = json.loads(y("mcp", "list", "--json").stdout)
    assert [(r["name"], r["scope"], r["loaded"]) for r in rows] == [("q", "project", True)]


def test_remove_asks_for_scope_when_both_files_have_the_name(y: Env) -> None:
    assert y("mcp", "add", "s", "--force", "--", "u").returncode == 0
    assert y("mcp", "add", "s", "--scope", "project", "--force", "--", "p").returncode == 0
    both = y("mcp", "remove", "s")
    assert both.returncode == 2
    assert "--scope" in both.stderr
    assert y("mcp", "remove", "s", "--scope", "project").returncode == 0
    assert "s" in y.servers()


def test_a_table_the_loader_refuses_can_still_be_removed(y: Env) -> None:
    y.user_config.write_text("# keep\n[mcp.broken]\nargs = ['x']\n")
    listed = y("mcp", "list")
    assert listed.returncode == 2
    assert "exactly one of 'command' (stdio) or 'url' (HTTP)" in listed.stderr
    done = y("mcp", "remove", "broken")
    assert done.returncode == 0, done.stderr
    assert y.user_config.read_text() == "# keep\n"
