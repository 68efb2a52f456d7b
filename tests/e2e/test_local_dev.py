"""The browser and `web_fetch` against the app being built on a loopback port, through the real
product: a `yagent run --agent browser --json` process, real headless Chromium, a local dev server
(`tests.tools.browser.site`) and a scripted OpenAI-compatible server that records exactly what the
model received.

Without an opening both tools are refused and say why (netguard's reason, never "this tool does
not exist"); with `--allow-local PORT` or a trusted `[network] allow_local` both reach the dev
server; a project's untrusted `[network]` is withheld with a notice; a redirect to the cloud
metadata address stays refused whatever is open; `[sandbox] allow_hosts` naming a loopback
address is refused at start (exit 2) instead of being accepted and ignored.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_providers import openai_reply
from tests.llm.wire import WireServer
from tests.projecttrust import write_trusted
from tests.tools.browser.site import Site, serve
from yagent.llm.scripted import call

pytestmark = [pytest.mark.browser, pytest.mark.timeout(240)]


@pytest.fixture(scope="module")
def site() -> Iterator[Site]:
    with serve() as s:
        yield s


def _home(tmp_path: Path, server: WireServer, extra: str = "") -> Path:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    (home / "config.toml").write_text(
        f'[llm]\nprovider = "openai"\nmodel = "gpt-test"\nbase_url = "{server.url}/v1"\n'
        "step_retries = 0\n[agent]\ndeferred_tools = false\n" + extra
    )
    return home


def run_yagent(
    home: Path, ws: Path, *flags: str, agent: str = "browser"
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "YAGENT_HOME": str(home), "OPENAI_API_KEY": "sk-test-not-real"}
    for name in ("YAGENT_PROVIDER", "YAGENT_MODEL", "YAGENT_BASE_URL"):
        env.pop(name, None)
    argv = [sys.executable, "-m", "yagent.cli", "run", "--json", "-y", "-C", str(ws)]
    argv += ["--agent", agent, *flags, "open the app"]
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=200)


def tool_results(received: Sequence[Any]) -> dict[str, dict[str, Any]]:
    """What the model read for each tool call, as JSON (from the last request it received)."""
    out: dict[str, dict[str, Any]] = {}
    for message in received[-1]["messages"]:
        if message["role"] == "tool":
            content = message["content"]
            text = content if isinstance(content, str) else "".join(p["text"] for p in content)
            out[message["tool_call_id"]] = json.loads(text)
    return out


def script(site: Site, *more: Any) -> list[Any]:
    return [
        call("browser_navigate", json.dumps({"url": site.url("/")}), call_id="nav"),
        call("web_fetch", json.dumps({"url": site.url("/other")}), call_id="fetch"),
        *more,
        call("agent_exit", json.dumps({"reason": "done", "summary": "looked"}), call_id="x"),
    ]


def _workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    return ws


def test_loopback_is_refused_without_an_opening_and_says_why(tmp_path: Path, site: Site) -> None:
    ws = _workspace(tmp_path)
    turns = script(site)
    before = site.hits["/other"]  # the site serves the whole module
    with WireServer([openai_reply(t) for t in turns]) as server:
        home = _home(tmp_path, server)
        done = run_yagent(home, ws)
        received = [r.body for r in server.received]
    assert done.returncode == 0, done.stderr[-3000:]
    results = tool_results(received)
    nav, fetch = results["nav"], results["fetch"]
    for refused in (nav, fetch):
        assert refused["kind"] == "permission", refused
        assert "loopback" in refused["error"], refused
        assert "does not exist" not in json.dumps(refused), refused
        assert "--allow-local" in refused["error"]
        assert "allow_local" in refused["error"]
    assert site.hits["/other"] == before


def test_allow_local_flag_opens_that_port_for_the_browser_and_web_fetch(
    tmp_path: Path, site: Site
) -> None:
    ws = _workspace(tmp_path)
    metadata = call("web_fetch", json.dumps({"url": site.url("/to-metadata")}), call_id="meta")
    turns = script(site, metadata)
    with WireServer([openai_reply(t) for t in turns]) as server:
        home = _home(tmp_path, server)
        done = run_yagent(home, ws, "--allow-local", str(site.port))
        received = [r.body for r in server.received]
    assert done.returncode == 0, done.stderr[-3000:]
    results = tool_results(received)
    assert results["nav"]["status"] == 200
    assert results["nav"]["title"] == "Test Page"
    assert results["fetch"]["status"] == 200
    assert "the other page" in results["fetch"]["text"]
    # the opening is that port on loopback: the metadata address stays refused behind it
    assert results["meta"]["kind"] == "permission"
    assert "metadata" in results["meta"]["error"]


def test_project_allow_local_applies_only_once_trusted(tmp_path: Path, site: Site) -> None:
    ws = _workspace(tmp_path)
    project = f'[network]\nallow_local = ["127.0.0.1:{site.port}"]\n'
    with WireServer([openai_reply(t) for t in script(site)]) as server:
        home = _home(tmp_path, server)
        (ws / ".yagent").mkdir()
        (ws / ".yagent" / "config.toml").write_text(project)
        done = run_yagent(home, ws)
        received = [r.body for r in server.received]
    assert done.returncode == 0, done.stderr[-3000:]
    notices = [
        line["text"]
        for line in map(json.loads, done.stdout.splitlines())
        if line.get("type") == "notice"
    ]
    assert any("network" in n and "yagent trust" in n for n in notices), notices
    assert tool_results(received)["nav"]["kind"] == "permission"
    with WireServer([openai_reply(t) for t in script(site)]) as server:
        home = _home(tmp_path, server)
        write_trusted(home, ws, project)
        done = run_yagent(home, ws)
        received = [r.body for r in server.received]
    assert done.returncode == 0, done.stderr[-3000:]
    results = tool_results(received)
    assert results["nav"]["title"] == "Test Page"
    assert "the other page" in results["fetch"]["text"]


@pytest.mark.parametrize(
    ("flags", "config", "named"),
    [
        (("--allow-local", "169.254.169.254:80"), "", "169.254.169.254"),
        (("--allow-local", "0"), "", "'0'"),
        ((), '[network]\nallow_local = ["metadata.google.internal:80"]\n', "metadata"),
        ((), '[network]\nallow_local = ["8.8.8.8:53"]\n', "8.8.8.8"),
        ((), '[sandbox]\nallow_hosts = ["127.0.0.1:5173"]\n', "allow_local"),
        ((), '[sandbox]\nallow_hosts = ["devbox.local:8080"]\n', "allow_local"),
    ],
)
def test_openings_that_cannot_hold_are_refused_at_start(
    tmp_path: Path, flags: tuple[str, ...], config: str, named: str
) -> None:
    ws = _workspace(tmp_path)
    with WireServer([]) as server:
        home = _home(tmp_path, server, config)
        done = run_yagent(home, ws, *flags)
        assert server.received == []
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert named in done.stderr, done.stderr


def test_the_interactive_entry_takes_the_flag_and_refuses_a_bad_entry(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    with WireServer([]) as server:
        home = _home(tmp_path, server)
        env = {**os.environ, "YAGENT_HOME": str(home), "OPENAI_API_KEY": "sk-test-not-real"}
        done = subprocess.run(
            [sys.executable, "-m", "yagent.cli", "-C", str(ws), "--allow-local", "localhost"],
            env=env,
            input="open the app",  # not a terminal: the entry runs this task once
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode == 2, done.stdout + done.stderr
    assert "--allow-local" in done.stderr
    assert "needs a port" in done.stderr
    assert "Traceback" not in done.stderr


def test_an_agent_without_web_fetch_is_told_the_real_reason(tmp_path: Path, site: Site) -> None:
    ws = _workspace(tmp_path)
    turns = [
        call("web_fetch", json.dumps({"url": site.url("/other")}), call_id="fetch"),
        call("no_such_tool", "{}", call_id="ghost"),
        call("agent_exit", json.dumps({"reason": "done", "summary": "x"}), call_id="x"),
    ]
    before = site.hits["/other"]  # the site serves the whole module
    with WireServer([openai_reply(t) for t in turns]) as server:
        home = _home(tmp_path, server)
        done = run_yagent(home, ws, "--allow-local", str(site.port), agent="coding")
        received = [r.body for r in server.received]
    assert done.returncode == 0, done.stderr[-3000:]
    results = tool_results(received)
    refused = results["fetch"]
    assert refused["kind"] == "permission", refused
    assert "No such tool" not in refused["error"]
    assert "coding" in refused["error"]
    assert "browser" in refused["error"]
    assert "devops" in refused["error"]
    assert "No such tool 'no_such_tool'" in results["ghost"]["error"], "unknown names: unchanged"
    assert site.hits["/other"] == before
