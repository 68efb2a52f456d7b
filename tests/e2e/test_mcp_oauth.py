"""An MCP server that requires OAuth, through the real product: `yagent run --json` signs in
(the browser is tests/fake_browser.py through `$BROWSER`), keeps the tokens under YAGENT_HOME and
never shows them."""

from __future__ import annotations

import stat
import sys
from pathlib import Path

import pytest

from tests.e2e.test_mcp_inbound import EXIT, results, run
from tests.mcpservers import ROOT
from tests.tools.test_mcp_oauth import guarded, issued  # noqa: F401 - a fixture
from yagent.llm.scripted import call

pytestmark = pytest.mark.timeout(180)


def test_run_signs_in_and_never_shows_the_token(
    guarded: tuple[str, Path],  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    url, log = guarded
    monkeypatch.setenv("BROWSER", f"{sys.executable} {ROOT / 'tests' / 'fake_browser.py'} %s")
    who = call("ev__whoami", "{}", call_id="who")
    done, lines, received = run(tmp_path, [who, EXIT], {"url": url, "oauth": True}, ("-y",))
    assert done.returncode == 0, done.stderr[-3000:]
    assert results(lines)["who"]["ok"]
    assert "signed in" in results(lines)["who"]["content"]
    tokens = issued(log)
    assert len(tokens) == 1
    for where in (done.stdout, done.stderr, str([r.body for r in received])):
        assert tokens[0] not in where
    stored = tmp_path / "home" / "mcp-auth" / "ev.json"
    assert stat.S_IMODE(stored.stat().st_mode) == 0o600
    sessions = (tmp_path / "home" / "sessions.db").read_bytes()
    assert tokens[0].encode() not in sessions
