"""The session sandbox (`tools.jobs`, `tools.jobhost`) with real bwrap and real processes."""

from __future__ import annotations

import os
from pathlib import Path

import anyio
import pytest

from tests.tools.test_bash_sandbox import adapter, bash


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
