"""The session sandbox (`tools.jobs`, `tools.jobhost`) with real bwrap and real processes."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.tools.test_bash_limits import ended
from tests.tools.test_bash_sandbox import adapter, bash
from yagent.tools.adapter import Adapter
from yagent.tools.jobhost import wire

# A writer that shed the job's mark and group: nothing finds it but the pipe it holds.
STRAY = "env -u YAGENT_RUN setsid"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / ".git").mkdir(parents=True)
    (tmp_path / "outside").mkdir()
    return root


@pytest.mark.anyio
async def test_a_redirected_ampersand_leftover_is_a_job_and_stays_confined(
    ws: Path, tmp_path: Path
) -> None:
    a = adapter(ws, tmp_path / "home")
    line = "(sleep 0.3; echo escaped > ../outside/x; echo evil > .git/x; sleep 60) > out.txt 2>&1 &"
    done = await bash(a, line)
    assert "job 1 [running]" in done["text"], "no pipe held: found by its mark, still a job"
    with anyio.fail_after(20):
        while "Read-only" not in (ws / "out.txt").read_text():  # noqa: ASYNC110
            await anyio.sleep(0.05)
    assert not (tmp_path / "outside" / "x").exists()
    assert not (ws / ".git" / "x").exists()


@pytest.mark.anyio
async def test_a_timed_out_run_kills_what_left_its_group(ws: Path, tmp_path: Path) -> None:
    a = adapter(ws, tmp_path / "home")
    done = await bash(a, "setsid sleep 300 & sleep 300", timeout=1)
    assert done["receipt"] == "timeout"
    listed = await bash(a, "ps -eo args")
    assert "sleep 300" not in listed["text"], "the setsid escapee died with the run"
    assert "jobs" not in listed


@pytest.mark.anyio
async def test_the_supervisor_socket_is_out_of_the_sandboxes_reach(
    ws: Path, tmp_path: Path
) -> None:
    a = adapter(ws, tmp_path / "home")
    await bash(a, "true")
    session = a.ctx.surface.options.commands.session  # type: ignore[union-attr]
    assert session is not None
    path = session.socket_path
    assert path.exists()
    probe = f"python3 -c \"import socket; socket.socket(socket.AF_UNIX).connect('{path}')\""
    done = await bash(a, probe)
    assert done["receipt"] == "exit_nonzero"
    assert "FileNotFoundError" in done["text"]
    assert os.stat(path.parent).st_mode & 0o077 == 0


@pytest.mark.anyio
async def test_a_run_that_ignores_sigterm_is_gone_before_its_timeout_result(
    ws: Path, tmp_path: Path
) -> None:
    a = adapter(ws, tmp_path / "home")
    word = f"sleep 300.{os.getpid()}{id(a) % 1000:03d}"
    done = await bash(a, f"trap '' TERM; {word} & {word} & wait", timeout=1)
    assert done["receipt"] == "timeout"
    assert _running(word) == [], "ended by SIGKILL before the exit was reported"
    assert "jobs" not in done


async def listed(a: Adapter, job: int) -> dict[str, Any]:
    found = json.loads((await a.call("list_jobs", "{}")).content)["jobs"]
    return next(j for j in found if j["id"] == job)  # type: ignore[no-any-return]


@pytest.mark.anyio
async def test_a_job_still_writing_when_its_command_exits_ends_with_all_its_output(
    ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(wire, "JOB_DRAIN", 300.0)  # only the end of its output ends it here
    a = adapter(ws, tmp_path / "home")
    writer = "while [ ! -e go ]; do sleep 0.05; done; seq 1 100000; echo last-line"
    started = await bash(a, f"{STRAY} sh -c '{writer}' & echo started", is_background=True)
    for _ in range(1200):  # until its command has exited and nothing carries its mark (bounded)
        job = await listed(a, started["job"])
        if job["exit_code"] is not None and not job["pids"]:
            break
        await anyio.sleep(0.05)
    assert job["running"], "its command exited and nothing carries its mark: its output is open"
    assert job["state"] == "running"
    (ws / "go").touch()  # the writer writes everything only now, after its job's command ended
    done = await ended(a, started["job"])
    assert done["state"] == "exited with code 0", done
    assert done["output_open"] is False
    assert done["last_lines"][-2:] == ["100000", "last-line"]
    log = await anyio.Path(done["log"]).read_text()
    assert log.split("\n")[1:-2] == [str(i) for i in range(1, 100001)]


@pytest.mark.anyio
async def test_a_job_whose_output_a_stray_process_holds_ends_after_the_drain_and_says_so(
    ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(wire, "JOB_DRAIN", 0.5)
    a = adapter(ws, tmp_path / "home")
    started = await bash(a, f"{STRAY} sleep 300 & echo held", is_background=True)
    done = await ended(a, started["job"])  # bounded: a drain that never ran out fails here
    assert done["exit_code"] == 0
    assert done["output_open"] is True
    assert done["state"].startswith("exited with code 0; its output was still held open"), done
    assert done["last_lines"] == ["held"]
    listed_text = json.loads((await a.call("list_jobs", "{}")).content)["text"]
    assert "its output was still held open" in listed_text


def _running(word: str) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                cmdline = Path(f"/proc/{name}/cmdline").read_bytes().replace(b"\0", b" ")
                state = Path(f"/proc/{name}/stat").read_bytes().rsplit(b")", 1)[1].split()[0]
            except (OSError, IndexError):
                continue
            if word.encode() in cmdline and state != b"Z":
                found.append(int(name))
    return found
