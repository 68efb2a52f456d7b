"""OAuth 2.1 + PKCE against an MCP server that requires it (tests/mcp_oauth_server.py: the SDK's
own authorization-server and bearer-auth pieces on loopback); the person's browser is
tests/fake_browser.py through `$BROWSER`."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
import webbrowser
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.mcpservers import ROOT, free_port
from yagent.tools.mcp import oauth as oauth_module
from yagent.tools.mcp.client import McpTools
from yagent.tools.mcp.config import McpConfigError, ServerConfig


@pytest.fixture
def guarded(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    port = free_port()
    log = tmp_path / "server.log"
    with log.open("w") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "tests.mcp_oauth_server", str(port)],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
    try:
        deadline = time.monotonic() + 30
        while "Uvicorn running" not in log.read_text() and time.monotonic() < deadline:
            time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp", log
    finally:
        proc.terminate()
        proc.wait(10)


def use_browser(monkeypatch: pytest.MonkeyPatch, command: str) -> None:
    monkeypatch.setenv("BROWSER", command)
    monkeypatch.setattr(webbrowser, "_tryorder", None)  # read $BROWSER again
    monkeypatch.setattr(webbrowser, "_browsers", {})


def issued(log: Path) -> list[str]:
    return [line.split()[1] for line in log.read_text().splitlines() if line.startswith("issued ")]


@pytest.mark.anyio
async def test_sign_in_with_pkce_then_reuse_the_stored_tokens(
    guarded: tuple[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url, log = guarded
    auth = tmp_path / "home" / "mcp-auth"
    cfg = ServerConfig.from_mapping("g", {"url": url, "oauth": True})
    use_browser(monkeypatch, f"{sys.executable} {ROOT / 'tests' / 'fake_browser.py'} %s")
    async with McpTools((cfg,), auth_dir=auth) as mcp:
        assert mcp.problems == []
        out = await mcp.executors["g__whoami"](None, {})  # type: ignore[arg-type]
        shown = repr(mcp.status())
    assert out["content"] == "signed in"
    tokens = issued(log)
    assert len(tokens) == 1
    stored = auth / "g.json"
    assert stat.S_IMODE(stored.stat().st_mode) == 0o600
    assert stat.S_IMODE(auth.stat().st_mode) == 0o700
    assert json.loads(stored.read_text())["tokens"]["access_token"] == tokens[0]
    assert tokens[0] not in shown
    # a later process signs in with what it stored: no browser, no new token
    use_browser(monkeypatch, "false %s")
    async with McpTools((cfg,), auth_dir=auth) as mcp:
        assert mcp.problems == []
        again = await mcp.executors["g__whoami"](None, {})  # type: ignore[arg-type]
    assert again["content"] == "signed in"
    assert len(issued(log)) == 1
    assert [p.name for p in auth.iterdir()] == ["g.json"]  # no temporary file left behind


@pytest.mark.anyio
async def test_a_sign_in_that_never_finishes_makes_the_server_unavailable(
    guarded: tuple[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url, log = guarded
    monkeypatch.setattr(oauth_module, "SIGN_IN_TIMEOUT", 1.0)
    use_browser(monkeypatch, "false %s")  # nobody signs in
    cfg = ServerConfig.from_mapping("g", {"url": url, "oauth": True, "startup_timeout": 20})
    async with McpTools((cfg,), auth_dir=tmp_path / "auth") as mcp:
        assert mcp.specs == []
        assert "sign-in did not finish" in dict(mcp.problems)["g"]
    assert issued(log) == []


def test_oauth_needs_an_http_server() -> None:
    with pytest.raises(McpConfigError, match="'oauth' needs a 'url'"):
        ServerConfig.from_mapping("x", {"command": "c", "oauth": True})
    assert os.sep  # the module imports cleanly without a server
