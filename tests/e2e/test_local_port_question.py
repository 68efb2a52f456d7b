"""The one-time question before the browser or web_fetch reaches a local service, through the
real product: `yagent` in a pseudo-terminal (and `yagent run --json`) against a scripted
OpenAI-compatible server, with a dev server on a loopback port. Answering "y" opens the port for
the session (every loopback spelling of it), "n" refuses, "a" remembers it in the person's
settings for the project (a later non-interactive run reaches it without a question); a run with
nobody to answer refuses with the flag and the key that would open it; `-y` neither asks nor
opens; cloud metadata is never asked about.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.cli.ptyterm import CTRL_D, Term, configure
from tests.cli.test_robustness import tool_reply
from tests.e2e.test_local_dev import tool_results
from tests.llm.wire import WireServer
from tests.tools.browser.site import Site, serve

pytestmark = pytest.mark.timeout(180)
METADATA = "http://169.254.169.254/latest/meta-data/"


@pytest.fixture
def site() -> Iterator[Site]:
    with serve() as s:
        yield s


def fetch(call_id: str, url: str) -> Any:
    return tool_reply(call_id, "web_fetch", {"url": url})


EXIT = tool_reply("x", "agent_exit", {"reason": "done", "summary": "looked"})


def _session(home: Path, ws: Path, keys: list[str], *args: str) -> str:
    """An interactive session: one task, `keys` pressed at each question in turn."""
    term = Term(home, ws, ("--agent", "browser", *args))
    try:
        term.ready()
        term.line("open the app")
        for key in keys:
            term.wait_for("needs your approval")
            term.wait_for("allow?")
            term.send(key)
            term.wait_for("  → ")
        term.wait_for("finished ·")
        term.wait_for("yagent>")
        term.send(CTRL_D)
        assert term.finish() == 0
        return term.text
    finally:
        term.close()


def _settings(home: Path) -> dict[str, Any]:
    path = home / "settings.json"
    return dict(json.loads(path.read_text())) if path.exists() else {}


def test_yes_opens_the_port_for_the_session_and_no_refuses(tmp_path: Path, site: Site) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    local = f"http://localhost:{site.port}/other"
    replies = [
        fetch("refused", site.url("/other")),
        fetch("opened", site.url("/other")),
        fetch("same-port", local),  # the other loopback spelling: no second question
        fetch("metadata", METADATA),  # never asked about
        EXIT,
    ]
    with WireServer(replies) as server:
        configure(home, server.url)
        screen = _session(home, ws, ["n", "y"])
        received = [r.body for r in server.received]
    assert screen.count("! web_fetch needs your approval") == 2, screen
    assert f"open 127.0.0.1:{site.port} for this project?" in screen
    assert f"yes: open port {site.port} on this machine" in screen
    assert "local_openings in" in screen  # where "always" would remember it
    results = tool_results(received)
    assert results["refused"]["kind"] == "permission", results["refused"]
    assert results["refused"]["stage"] == "local_network", results["refused"]
    assert "error" not in results["opened"], results["opened"]
    assert "error" not in results["same-port"], results["same-port"]
    assert site.hits["/other"] == 2  # the refused call never reached the site
    assert "no setting opens" in results["metadata"]["error"], results["metadata"]
    assert "local_openings" not in _settings(home)  # "y" is for this session only


def test_always_is_remembered_for_the_project(tmp_path: Path, site: Site) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    with WireServer([fetch("first", site.url("/other")), EXIT]) as server:
        configure(home, server.url)
        _session(home, ws, ["a"])
    assert _settings(home)["local_openings"] == {os.path.realpath(ws): [str(site.port)]}
    with WireServer([fetch("later", site.url("/other")), EXIT]) as server:
        configure(home, server.url)
        done = _run(home, ws)
        received = [r.body for r in server.received]
    assert done.returncode == 0, done.stdout + done.stderr
    assert "error" not in tool_results(received)["later"]
    assert site.hits["/other"] == 2


def _run(home: Path, ws: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("YAGENT_")}
    env.update(YAGENT_HOME=str(home), OPENAI_API_KEY="sk-test-not-real")
    argv = [sys.executable, "-m", "yagent.cli", "run", "--json", "-C", str(ws), *flags]
    argv += ["--agent", "browser", "go"]
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)


def test_a_run_without_a_person_refuses_with_the_flag_and_key(tmp_path: Path, site: Site) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    with WireServer([fetch("f", site.url("/other")), EXIT]) as server:
        configure(home, server.url)
        done = _run(home, ws)
        received = [r.body for r in server.received]
    assert done.returncode == 0, done.stdout + done.stderr
    refused = tool_results(received)["f"]
    assert refused["kind"] == "needs_approval", refused
    assert "nobody could be asked" in refused["error"]
    assert f"open 127.0.0.1:{site.port} for this project?" in refused["error"]
    assert f"--allow-local 127.0.0.1:{site.port}" in refused["error"]
    assert "[network] allow_local" in refused["error"]
    assert site.hits["/other"] == 0


def test_yes_to_everything_neither_asks_nor_opens(tmp_path: Path, site: Site) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    replies = [fetch("loop", site.url("/other")), fetch("metadata", METADATA), EXIT]
    with WireServer(replies) as server:
        configure(home, server.url)
        screen = _session(home, ws, [], "-y")
        received = [r.body for r in server.received]
    assert "needs your approval" not in screen
    results = tool_results(received)
    assert "--allow-local" in results["loop"]["error"], results["loop"]
    assert "no setting opens" in results["metadata"]["error"], results["metadata"]
    assert site.hits["/other"] == 0
