"""Issue 14, item 4: a full disk at `YAGENT_HOME` mid-run, through the real `yagent` process.

`YAGENT_HOME` is a 2 MB tmpfs mounted for the test. The model's first step runs two shell
commands: the first writes a side-effect marker and waits for the test, which fills the disk
meanwhile; the second must then never start. The run stops at the step boundary as interrupted
(exit 75, one line naming the file and `yagent resume SID`, no traceback); `yagent sessions` and
`yagent doctor` on the full disk say one clear line; once space is freed, `yagent resume SID`
finishes the run without re-running the finished command, and the stored history has one result
per call id.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from yagent.llm.replay import Recording
from yagent.llm.scripted import call, calls
from yagent.memory import SessionStore

EXIT = json.dumps({"reason": "done", "summary": "done"})
FIRST = json.dumps(
    {
        "command": "echo once >> marker; touch started; "
        "for i in $(seq 1 1200); do [ -e go ] && break; sleep 0.05; done; echo finished"
    }
)
SECOND = json.dumps({"command": "echo second >> second"})
FULL_EXIT = 75


def recording(tmp: Path, name: str, *turns: object) -> str:
    rec = Recording()
    for turn in turns:
        rec.add("coding", turn)  # type: ignore[arg-type]
    path = tmp / name
    rec.save(path)
    return str(path)


def yagent(args: list[str], home: Path, ws: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "YAGENT_HOME": str(home), "COLUMNS": "400"}
    return subprocess.Popen(
        [sys.executable, "-m", "yagent.cli", *args],
        env=env,
        cwd=ws,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(proc: subprocess.Popen[str]) -> tuple[int, str, str]:
    out, err = proc.communicate(timeout=120)
    return proc.returncode, out, err


@pytest.fixture
def small_home(tmp_path: Path) -> Iterator[Path]:
    """A 2 MB tmpfs as YAGENT_HOME, always unmounted."""
    home = tmp_path / "home"
    home.mkdir()
    subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=2m,mode=0700", "tmpfs", str(home)],
        check=True,
        timeout=30,
    )
    try:
        yield home
    finally:
        subprocess.run(["umount", "-l", str(home)], check=False, timeout=30)


def fill(home: Path) -> Path:
    """Fill the file system holding `home` until it refuses another byte."""
    filler = home / "filler"
    chunk = b"\0" * 4096
    with filler.open("wb", buffering=0) as out:
        while True:
            try:
                out.write(chunk)
            except OSError as exc:
                if exc.errno != errno.ENOSPC:
                    raise
                break
    with contextlib.suppress(OSError), (home / "crumbs").open("wb", buffering=0) as out:
        while True:  # the last partial page too
            out.write(b"\0")
    return filler


def result_of(out: str) -> dict[str, object]:
    lines = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    found = [line for line in lines if line.get("type") == "result"]
    assert len(found) == 1, out
    return dict(found[0])


def one_line(err: str) -> str:
    assert "Traceback" not in err, err
    assert "ExceptionGroup" not in err, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    return lines[0]


@pytest.mark.timeout(240)
def test_a_full_disk_stops_the_run_at_a_step_boundary_and_resume_finishes_it(
    tmp_path: Path, small_home: Path
) -> None:
    home, ws = small_home, tmp_path / "ws"
    ws.mkdir()
    (home / "config.toml").write_text('[agent]\npreset = "yolo"\n')
    first = recording(
        tmp_path,
        "a.json",
        calls([("run_bash", FIRST, "blocked"), ("run_bash", SECOND, "second")]),
        call("agent_exit", EXIT, call_id="x"),
    )
    runner = yagent(["run", "--json", "-y", "--replay", first, "go"], home, ws)
    try:
        for _ in range(2400):
            if (ws / "started").exists() or runner.poll() is not None:
                break
            with contextlib.suppress(subprocess.TimeoutExpired):
                runner.wait(0.05)
        assert (ws / "started").exists(), finish(runner)
        filler = fill(home)
    finally:
        (ws / "go").touch()
    code, out, err = finish(runner)
    result = result_of(out)
    sid = result["session_id"]
    assert code == FULL_EXIT, (out, err)
    line = one_line(err)
    assert line.startswith("yagent: the disk holding "), line
    assert str(home) in line
    assert line.endswith(f"is full; free space and run `yagent resume {sid}`"), line
    assert result["status"] == "paused", result  # interrupted at the boundary, not failed
    assert not (ws / "second").exists(), "no tool call starts once the disk is full"

    sessions = yagent(["sessions"], home, ws)
    code, out, err = finish(sessions)
    assert "Traceback" not in err
    assert code == 0, (out, err)  # reading needs no space: the list is shown
    assert sid[:12] in out

    doctor = yagent(["doctor"], home, ws)
    code, out, err = finish(doctor)
    assert "Traceback" not in err, err
    assert code == 1, (out, err)
    full = [line for line in out.splitlines() if "is full" in line]
    assert len(full) == 1, out
    assert "disk space" in full[0], out
    assert "FAIL" in full[0], out

    filler.unlink()
    (home / "crumbs").unlink()
    with SessionStore(home / "sessions.db") as store:
        sealed = store.messages(sid)
    roles = [m["role"] for m in sealed]
    assert roles == ["user", "assistant"], "nothing stored after the first write that failed"
    second = recording(tmp_path, "b.json", call("agent_exit", EXIT, call_id="y"))
    resumed = yagent(["resume", sid, "--json", "-y", "--replay", second], home, ws)
    code, out, err = finish(resumed)
    assert code == 0, (out, err)
    assert "Traceback" not in err
    assert result_of(out)["status"] == "finished"

    assert (ws / "marker").read_text() == "once\n", "the finished command was not run again"
    assert not (ws / "second").exists()
    with SessionStore(home / "sessions.db") as store:
        stored = store.messages(sid)
    results = [m["tool_call_id"] for m in stored if m["role"] == "tool"]
    assert sorted(results) == ["blocked", "second", "y"], "one result per call id"
    settled = {m["tool_call_id"]: str(m["content"]) for m in stored if m["role"] == "tool"}
    assert "INTERRUPTED" in settled["blocked"], "its result was never stored: said, not re-run"
    assert "NOT re-run" in settled["blocked"]
    turns = [json.dumps(m.get("tool_calls")) for m in stored if m["role"] == "assistant"]
    assert len(turns) == len(set(turns)), "no assistant turn stored twice"


@pytest.mark.timeout(120)
def test_a_run_started_on_a_full_disk_is_refused_in_one_line(
    tmp_path: Path, small_home: Path
) -> None:
    home, ws = small_home, tmp_path / "ws"
    ws.mkdir()
    (home / "config.toml").write_text('[agent]\npreset = "yolo"\n')
    fill(home)
    rec = recording(tmp_path, "a.json", call("agent_exit", EXIT, call_id="x"))
    code, out, err = finish(yagent(["run", "--json", "-y", "--replay", rec, "go"], home, ws))
    assert code == FULL_EXIT, (out, err)
    line = one_line(err)
    assert line.startswith("yagent: the disk holding "), line
    assert "is full" in line, line
    assert "free space" in line, line
