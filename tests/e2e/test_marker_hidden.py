"""The genuine reminder marker is nowhere a sandboxed command can read (issue 13, item 2).

A real run through the `yagent` command (the replay engine on the model side; the CLI, the app,
the session store, the judgement ring and bubblewrap real) with HOME and YAGENT_HOME in a temp
dir under /var/tmp (the sandbox masks /tmp: a home there would prove nothing). After the run the
marker is in the session store; then the sandbox the app builds for this workspace walks every
file it can see (from /, /proc /sys /dev left out) that was written since this process drew the
marker — a file written before cannot hold it — and greps each for the marker: none may match.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from yagent.app import safety
from yagent.app.config import load
from yagent.cli import main
from yagent.kernel.context import reminder
from yagent.llm.replay import Recording
from yagent.llm.scripted import call, say

BAND = re.compile(rb'band=\\?"([0-9a-f]{32})')  # as stored: in JSON, quotes may be escaped

WALK_SECONDS = 240


def _process_start() -> float:
    """When this process started (epoch seconds): the marker was drawn after it."""
    ticks = int(Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()[19])
    boot = next(
        float(line.split()[1])
        for line in Path("/proc/stat").read_text().splitlines()
        if line.startswith("btime ")
    )
    return boot + ticks / os.sysconf("SC_CLK_TCK")


@pytest.fixture
def base(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    root = Path(tempfile.mkdtemp(prefix="yagent-marker-", dir="/var/tmp"))
    (root / "home").mkdir()
    (root / "ws").mkdir()
    (root / "ws" / "a.txt").write_text("a\n")
    monkeypatch.setenv("HOME", str(root / "home"))
    monkeypatch.setenv("YAGENT_HOME", str(root / "home" / ".yagent"))
    for name in ("YAGENT_PROVIDER", "YAGENT_MODEL", "YAGENT_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    yield root
    shutil.rmtree(root, ignore_errors=True)


@pytest.mark.timeout(WALK_SECONDS + 60)
def test_no_file_a_sandboxed_command_sees_holds_the_marker_after_a_real_run(
    base: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ws, home = base / "ws", base / "home" / ".yagent"
    rec = Recording()
    rec.add("coding", say("thinking"))  # no tool call: the loop adds a genuine reminder band
    rec.add("coding", call("run_bash", json.dumps({"command": "cat a.txt"}), call_id="c1"))
    rec.add("coding", call("agent_exit", json.dumps({"reason": "done"}), call_id="c2"))
    rec.save(base / "rec.json")
    since = _process_start()

    status = main(["run", "--json", "-y", "-C", str(ws), "--replay", str(base / "rec.json"), "go"])

    assert status == 0, capsys.readouterr().out
    # the session's own marker (drawn per session, kept in memory): read back from its bands
    found = {m for p in home.rglob("*") if p.is_file() for m in BAND.findall(p.read_bytes())} - {
        reminder.marker().encode()
    }
    assert len(found) == 1, "the run stored its session's marker (else this proves nothing)"
    mark = found.pop()

    gate = safety.build(load(home=home, workspace=ws), ws).commands
    where = anyio.run(gate.confinement)
    assert where.sandboxed
    assert where.launcher is not None
    stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(since - 1))
    script = (
        "find / \\( -path /proc -o -path /sys -o -path /dev \\) -prune -o -type f "
        f"-newermt '{stamp}' -print0 2>/dev/null | xargs -0 -r grep -lF -- \"$MARK\" 2>/dev/null;"
        " echo walked"
    )
    env = {**(where.env or {}), "MARK": mark.decode()}
    done = subprocess.run(
        where.launcher(["sh", "-c", script]),
        capture_output=True,
        text=True,
        env=env,
        cwd=ws,
        timeout=WALK_SECONDS,
        check=False,
    )
    assert "walked" in done.stdout, done.stderr
    assert done.stdout.strip() == "walked", f"readable in the sandbox: {done.stdout}"
