"""Huge outputs against the real product: a `yagent run --json -y` process (real bubblewrap)
against a scripted OpenAI-compatible server on loopback that records every request.

- One 3 MB line of letters from the shell (a base64-looking run: the offloader takes it for an
  inline object, which the output budget used not to count) reaches the model as a head, a
  visible notice and a `read_spill` locator — never whole.
- `search` over a file holding one 20 MB line: ripgrep's JSON record for it holds the whole line
  and one entry per match (a 300 MB line of `aaa` made a record of several GB, and yagent held
  9 GB). The reader reads past a record over `MAX_RECORD_BYTES`, still counts and places the
  match, and says the line was too long to show (the reader's memory bound is measured in
  `tests/tools/test_rg_records.py`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.e2e.test_providers import openai_reply
from tests.llm.wire import WireServer
from yagent.llm.scripted import call, calls


def run(
    tmp_path: Path,
    ws: Path,
    batch: list[tuple[str, dict[str, Any]]],
    secrets: dict[str, str] | None = None,
) -> Any:
    """One real run of `batch` (with `secrets` in yagent's environment, else a dummy API key);
    the requests the model server received and every tool result."""
    home = tmp_path / "home"
    home.mkdir()
    items = [(name, json.dumps(args), f"c{i}") for i, (name, args) in enumerate(batch)]
    turns = [calls(items), call("agent_exit", json.dumps({"reason": "done"}), call_id="x")]
    with WireServer([openai_reply(t) for t in turns]) as server:
        (home / "config.toml").write_text(
            f'[llm]\nprovider = "openai"\nmodel = "gpt-test"\nbase_url = "{server.url}/v1"\n'
            "step_retries = 0\n"
        )
        env = {**os.environ, "YAGENT_HOME": str(home), "HOME": str(tmp_path)}
        env |= secrets or {"OPENAI_API_KEY": "sk-test-not-real"}
        for name in ("YAGENT_PROVIDER", "YAGENT_MODEL", "YAGENT_BASE_URL"):
            env.pop(name, None)
        done = subprocess.run(
            [sys.executable, "-m", "yagent.cli", "run", "--json", "-y", "-C", str(ws), "go"],
            env=env,
            capture_output=True,
            text=True,
            timeout=150,
        )
        sent = [r.body for r in server.received]
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    results = [json.loads(x) for x in done.stdout.splitlines() if '"tool_result"' in x]
    assert len(results) == len(batch) + 1  # every call and agent_exit
    return sent, results


def tool_messages(body: dict[str, Any]) -> list[str]:
    return [str(m["content"]) for m in body["messages"] if m["role"] == "tool"]


def test_one_huge_line_of_letters_is_spilled_not_sent_whole(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    command = "head -c 3000000 /dev/zero | tr '\\0' a"
    sent, results = run(tmp_path, ws, [("run_bash", {"command": command})])
    assert results[0]["spilled"]["total_bytes"] > 3_000_000
    (shown,) = tool_messages(sent[-1])
    assert len(shown) < 40_000, "the default max_tool_output is 20 000 characters"
    assert "read_spill" in shown, "the rest is named, with the way to page it"


def test_search_over_one_huge_line_is_counted_without_holding_it(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "small.txt").write_text("one aaa here\n")
    with (ws / "big.txt").open("w") as f:
        f.write("aaa" + "x" * 20_000_000 + "\n")
    sent, results = run(tmp_path, ws, [("search", {"pattern": "aaa", "path": "."})])
    found = json.loads(results[0]["content"])
    assert found["total_matches"] == 2, found
    assert not found.get("timed_out"), found
    lines = {(m["path"], m["line"]) for m in found["matches"]}
    assert lines == {("big.txt", 1), ("small.txt", 1)}, found
    big = next(m for m in found["matches"] if m["path"] == "big.txt")
    assert "too long" in big["text"], big
    assert len(json.dumps(found)) < 20_000
    assert "too long" in tool_messages(sent[-1])[0]
