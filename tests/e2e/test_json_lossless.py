"""`yagent run --json` is lossless: a real `yagent run -y` process against a scripted
OpenAI-compatible server on loopback, one turn of 3 000 `think` calls (the display's normal queue
holds 1 024).

- `--json`: every call's `tool_call` and `tool_result` line is printed, in publish order (each
  result after its call), no `dropped` line, and nothing on stderr says an event was dropped.
- The plain display may drop under the flood, but never silently: the results it shows plus the
  `tool_result` events its "display fell behind" lines count make every call.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from tests.e2e.test_providers import openai_reply
from tests.llm.wire import WireServer
from yagent.llm.scripted import call, calls

CALLS = 3000


def flood(tmp_path: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    """One real run of `CALLS` `think` calls in one turn, then `agent_exit`."""
    home, ws = tmp_path / "home", tmp_path / "ws"
    home.mkdir()
    ws.mkdir()
    items = [("think", json.dumps({"thought": f"t{i}"}), f"c{i}") for i in range(CALLS)]
    turns = [calls(items), call("agent_exit", json.dumps({"reason": "done"}), call_id="x")]
    with WireServer([openai_reply(t) for t in turns]) as server:
        (home / "config.toml").write_text(
            f'[llm]\nprovider = "openai"\nmodel = "gpt-test"\nbase_url = "{server.url}/v1"\n'
            "step_retries = 0\n"
        )
        env = {**os.environ, "YAGENT_HOME": str(home), "HOME": str(tmp_path)}
        env["OPENAI_API_KEY"] = "sk-test-not-real"
        for name in ("YAGENT_PROVIDER", "YAGENT_MODEL", "YAGENT_BASE_URL"):
            env.pop(name, None)
        command = [sys.executable, "-m", "yagent.cli", "run", *flags, "-y", "-C", str(ws), "go"]
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=110)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return done


def test_json_prints_every_event_of_a_flood_in_publish_order(tmp_path: Path) -> None:
    done = flood(tmp_path, "--json")
    assert "dropped" not in done.stderr, done.stderr[-2000:]
    lines = [json.loads(x) for x in done.stdout.splitlines()]
    assert not [x for x in lines if x.get("type") == "dropped"]
    seen: dict[str, list[str]] = {}
    for line in lines:
        if line.get("type") in ("tool_call", "tool_result"):
            seen.setdefault(str(line.get("call_id")), []).append(line["type"])
    wanted = [f"c{i}" for i in range(CALLS)] + ["x"]
    assert [c for c in wanted if seen.get(c) != ["tool_call", "tool_result"]] == []
    assert lines[-1]["type"] == "result"
    assert lines[-1]["status"] == "finished"


def test_the_plain_display_says_how_many_results_it_did_not_show(tmp_path: Path) -> None:
    done = flood(tmp_path)
    shown = len(re.findall(r"^  ← ", done.stdout, re.MULTILINE))
    said = re.findall(r"display fell behind: not shown here: (.*) event", done.stdout)
    dropped = 0
    for line in said:
        found = re.search(r"(\d+) tool_result\b", line)
        dropped += int(found.group(1)) if found else 0
    assert shown + dropped == CALLS + 1, (shown, said)
