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
- 20 MB of random bytes from the shell: spilled like text, with yagent's peak resident memory
  (read from /proc) under 600 MiB — the pii scan folded the 10 MiB kept, decoded with
  replacements, with a Python object per character and peaked at 1.1 GB.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import time
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
    peaks: list[int] | None = None,
    extra: str = "",
) -> Any:
    """One real run of `batch` (with `secrets` in yagent's environment, else a dummy API key);
    the requests the model server received and every tool result. With `peaks`, yagent's peak
    resident memory (bytes, `VmHWM` in /proc) is appended to it; `extra` ends the `[llm]` table
    of the configuration (more keys, more tables)."""
    home = tmp_path / "home"
    home.mkdir()
    items = [(name, json.dumps(args), f"c{i}") for i, (name, args) in enumerate(batch)]
    turns = [calls(items), call("agent_exit", json.dumps({"reason": "done"}), call_id="x")]
    with WireServer([openai_reply(t) for t in turns]) as server:
        (home / "config.toml").write_text(
            f'[llm]\nprovider = "openai"\nmodel = "gpt-test"\nbase_url = "{server.url}/v1"\n'
            f"step_retries = 0\n{extra}"
        )
        env = {**os.environ, "YAGENT_HOME": str(home), "HOME": str(tmp_path)}
        env |= secrets or {"OPENAI_API_KEY": "sk-test-not-real"}
        for name in ("YAGENT_PROVIDER", "YAGENT_MODEL", "YAGENT_BASE_URL"):
            env.pop(name, None)
        command = [sys.executable, "-m", "yagent.cli", "run", "--json", "-y", "-C", str(ws), "go"]
        if peaks is None:
            done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=150)
        else:
            done = _watched(command, env, peaks)
        sent = [r.body for r in server.received]
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    results = [json.loads(x) for x in done.stdout.splitlines() if '"tool_result"' in x]
    assert len(results) == len(batch) + 1  # every call and agent_exit
    return sent, results


def _watched(
    command: list[str], env: dict[str, str], peaks: list[int]
) -> subprocess.CompletedProcess[str]:
    """`command` run to its end, its high-water resident memory read from /proc meanwhile (it only
    grows, so the last reading before the process exits is its peak up to then)."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(command, env=env, stdout=out, stderr=err, text=True)
        peak = 0
        try:
            while proc.poll() is None:
                try:
                    status = Path(f"/proc/{proc.pid}/status").read_text()
                except OSError:
                    break
                found = re.search(r"^VmHWM:\s+(\d+) kB", status, re.MULTILINE)
                peak = max(peak, int(found.group(1)) * 1024 if found else 0)
                time.sleep(0.02)
            proc.wait(timeout=150)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        peaks.append(peak)
        out.seek(0)
        err.seek(0)
        return subprocess.CompletedProcess(command, proc.returncode, out.read(), err.read())


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


def test_binary_output_is_spilled_with_memory_bounded(tmp_path: Path) -> None:
    # 20 MB of random bytes: 10 MiB kept, decoded with replacements into text that is not
    # NFKC-normal; the pii scan's folding held a Python int and a string per character (1.2 GB)
    ws = tmp_path / "ws"
    ws.mkdir()
    peaks: list[int] = []
    command = "head -c 20000000 /dev/urandom"
    sent, results = run(tmp_path, ws, [("run_bash", {"command": command})], peaks=peaks)
    assert results[0]["spilled"]["total_bytes"] > 10_000_000
    (shown,) = tool_messages(sent[-1])
    assert len(shown) < 40_000
    assert "read_spill" in shown
    (peak,) = peaks
    assert 0 < peak < 600 * 2**20, f"yagent peaked at {peak / 2**20:.0f} MiB"
