"""Background jobs under the sandbox, through a real `yagent run --json` process.

The model side is a recording (the real replay engine); everything else is real: the CLI, the
assembled app under the default `workspace-write` preset (-y answers the questions), the session
sandbox (bubblewrap, network unshared), the supervisor, `python3 -m http.server`. A server started
with `… &` in one call is reached from a later call (same sandbox loopback), listed with its
output, stopped; a job started with is_background is stopped at session end with a notice — or
kept, with `[sandbox] keep_background = true`.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

from yagent.llm.replay import Recording
from yagent.llm.scripted import call

FETCH = (
    'python3 -c "import time, urllib.request\n'
    "for _ in range({tries}):\n"
    "    try:\n"
    "        print(urllib.request.urlopen('http://127.0.0.1:{port}/').status); break\n"
    "    except OSError: time.sleep(0.1)\n"
    "else: print('unreachable')\""
)
MARK = "yagent-bgjobs-e2e"  # the served directory: in each server's argv, to find leftovers


def server(port: int) -> str:
    return f"python3 -u -m http.server {port} --bind 127.0.0.1 --directory {MARK}"


def run_yagent(
    tmp_path: Path, steps: list[tuple[str, str, dict[str, object]]], config: str = ""
) -> list[dict[str, object]]:
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    home.mkdir()
    (ws / MARK).mkdir()
    (ws / MARK / "index.html").write_text("hello from the workspace\n")
    if config:
        (home / "config.toml").write_text(config)
    rec = Recording()
    for call_id, name, args in steps:
        rec.add("coding", call(name, json.dumps(args), call_id=call_id))
    rec.add("coding", call("agent_exit", json.dumps({"reason": "done"}), call_id="end"))
    path = tmp_path / "rec.json"
    rec.save(path)
    env = {k: v for k, v in os.environ.items() if not k.startswith("YAGENT_")}
    env["YAGENT_HOME"] = str(home)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "yagent.cli",
            "run",
            "--json",
            "-y",
            "-C",
            str(ws),
            "--replay",
            str(path),
            "serve and fetch",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=100,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


def results(lines: list[dict[str, object]]) -> dict[str, dict[str, object]]:
    out = {}
    for line in lines:
        if line["type"] == "tool_result":
            out[str(line["call_id"])] = json.loads(str(line["content"]))
    return out


def servers_on_host() -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            with contextlib.suppress(OSError):
                if MARK.encode() in Path(f"/proc/{name}/cmdline").read_bytes():
                    found.append(int(name))
    return found


def test_a_server_started_with_ampersand_is_reached_listed_stopped_and_reaped(
    tmp_path: Path,
) -> None:
    lines = run_yagent(
        tmp_path,
        [
            ("c1", "run_bash", {"command": server(8765) + " &"}),
            ("c2", "run_bash", {"command": FETCH.format(port=8765, tries=100)}),
            ("c3", "list_jobs", {}),
            ("c4", "stop_job", {"id": 1}),
            ("c5", "run_bash", {"command": FETCH.format(port=8765, tries=3)}),
            ("c6", "run_bash", {"command": server(8766), "is_background": True}),
            ("c7", "run_bash", {"command": FETCH.format(port=8766, tries=100)}),
        ],
    )
    got = results(lines)
    assert got["c1"]["receipt"] == "success", got["c1"]
    assert "job 1 [running]" in str(got["c1"]["text"]), "the `&` leftover became a job"
    assert str(got["c2"]["text"]).startswith("200"), "a later call reaches the job's port"
    listed = got["c3"]["jobs"][0]  # type: ignore[index]
    assert listed["state"] == "running"
    assert MARK in listed["command"]
    assert any('"GET / HTTP/1.1" 200' in line for line in listed["last_lines"]), listed
    assert got["c4"]["job"]["state"] == "stopped"  # type: ignore[index]
    assert "unreachable" in str(got["c5"]["text"]), "stop_job really stopped it"
    assert got["c6"]["job"] == 4
    assert "session sandbox" in str(got["c6"]["text"])
    assert str(got["c7"]["text"]).startswith("200")
    notices = [str(line["text"]) for line in lines if line["type"] == "notice"]
    assert any(
        "stopped 1 background job(s) at session end: job 4" in n and "8766" in n for n in notices
    ), notices
    assert servers_on_host() == [], "no server outlives the run"


def test_keep_background_keeps_the_jobs_and_says_how_to_end_them(tmp_path: Path) -> None:
    lines = run_yagent(
        tmp_path,
        [("c1", "run_bash", {"command": server(8767), "is_background": True})],
        config="[sandbox]\nkeep_background = true\n",
    )
    notices = [str(line["text"]) for line in lines if line["type"] == "notice"]
    kept = [n for n in notices if n.startswith("kept 1 background job(s)")]
    try:
        assert kept, notices
        assert servers_on_host(), "the kept server still runs after yagent exited"
    finally:
        for match in re.finditer(r"`kill (\d+)`", " ".join(kept)):
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(match.group(1)), signal.SIGKILL)
    assert kept
    assert "8767" in kept[0]


NAP = "sleep 300.424242"  # the flood's sleepers: found on the host by this exact word


def sleepers_on_host() -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            with contextlib.suppress(OSError, IndexError):
                state = Path(f"/proc/{name}/stat").read_bytes().rsplit(b")", 1)[1].split()[0]
                cmdline = Path(f"/proc/{name}/cmdline").read_bytes().replace(b"\0", b" ")
                if NAP.encode() in cmdline and state != b"Z":
                    found.append(int(name))
    return found


def test_limit_kills_leave_the_session_s_job_running_and_nothing_behind(tmp_path: Path) -> None:
    lines = run_yagent(
        tmp_path,
        [
            ("c1", "run_bash", {"command": server(8768), "is_background": True}),
            ("c2", "run_bash", {"command": FETCH.format(port=8768, tries=100)}),
            ("c3", "run_bash", {"command": "python3 -c 'b = bytearray(1 << 30); print(len(b))'"}),
            ("c4", "run_bash", {"command": f"for i in $(seq 10000); do {NAP} & done; wait"}),
            ("c5", "run_bash", {"command": "ps -eo args"}),
            ("c6", "run_bash", {"command": FETCH.format(port=8768, tries=100)}),
            ("c7", "list_jobs", {}),
        ],
        config="[sandbox]\nmemory_mb = 256\nmax_processes = 64\n",
    )
    got = results(lines)
    assert str(got["c2"]["text"]).startswith("200"), got["c2"]
    memory, flood = got["c3"], got["c4"]
    assert memory["receipt"] == "limit", memory["text"]
    assert str(memory["limit"]).startswith("killed: memory limit 256 MiB"), memory
    assert "1073741824" not in str(memory["text"])
    assert flood["receipt"] == "limit", flood["text"]
    assert str(flood["limit"]).startswith("killed: process limit 64 (the sandbox held"), flood
    assert "[killed: process limit 64" in str(flood["text"])
    assert NAP not in str(got["c5"]["text"]), "nothing of the killed flood is left in the sandbox"
    assert str(got["c6"]["text"]).startswith("200"), "the job started earlier survived the kills"
    listed = got["c7"]["jobs"]
    assert [(job["id"], job["state"]) for job in listed] == [(1, "running")], listed  # type: ignore[union-attr]
    notices = [str(line["text"]) for line in lines if line["type"] == "notice"]
    assert any("stopped 1 background job(s) at session end: job 1" in n for n in notices), notices
    assert servers_on_host() == [], "no server outlives the run"
    assert sleepers_on_host() == [], "no sleeper of the flood outlives the run"
