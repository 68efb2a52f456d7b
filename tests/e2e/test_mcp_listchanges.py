"""A tool that appears mid-run (notifications/tools/list_changed) is usable in the same run,
through the real product: `yagent run --json` against a scripted OpenAI-compatible server."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.e2e.test_mcp_inbound import EXIT, results, run
from tests.mcpservers import ROOT
from yagent.llm.scripted import call

pytestmark = pytest.mark.timeout(180)


def test_a_tool_added_mid_run_is_offered_and_runs(tmp_path: Path) -> None:
    grow = call("ev__grow", json.dumps({"name": "wave"}), call_id="grow")
    wave = call("ev__wave", "{}", call_id="wave")
    table = {"command": sys.executable, "args": ["-m", "tests.mcp_growing"], "cwd": str(ROOT)}
    done, lines, received = run(tmp_path, [grow, wave, EXIT], table, ("-y",))
    assert done.returncode == 0, done.stderr[-3000:]
    got = results(lines)
    assert got["grow"]["ok"]
    assert got["wave"]["ok"], got["wave"]
    assert "wave says hello" in got["wave"]["content"]
    assert any(x.get("type") == "mcp_tools_changed" for x in lines)
    names = [t["function"]["name"] for t in received[1].body["tools"]]
    assert "ev__wave" in names
    assert "ev__wave" not in [t["function"]["name"] for t in received[0].body["tools"]]
