"""run_bash under the sandbox's resource limits: real bwrap, real bombs, small limits.

Every run has a command timeout far above what the limit needs; a run that reached it would
come back as `timeout`, not `limit` — so a limit that does not hold turns these tests red
without any timed assertion.
"""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path
from typing import Any

import anyio
import pytest

from yagent.kernel.confine import sandbox
from yagent.kernel.confine.sandbox.identity import SANDBOX_UID
from yagent.kernel.judge.preset import BUILTIN as PRESETS
from yagent.tools import registry
from yagent.tools.adapter import Adapter, ToolContext
from yagent.tools.commands import CommandGate
from yagent.tools.guard import WorkspaceGuard
from yagent.tools.settings import Settings
from yagent.tools.shellrules import build_policy
from yagent.tools.surface import Surface, SurfaceOptions
from yagent.tools.toolresult import ToolResult
from yagent.tools.yolo import Yolo
from yagent.toolspec.builtin import BUILTIN
from yagent.toolspec.profiles import profile

SMALL = sandbox.Limits(
    memory_mb=256, max_processes=64, cpu_seconds=2, file_size_mb=1, open_files=256
)
SLOW = 90  # the command timeout: never reached when the limit holds


def adapter(ws: Path, home: Path, limits: sandbox.Limits = SMALL) -> Adapter:
    gate = CommandGate(build_policy([]), PRESETS.resolve("workspace-write"), ws, limits=limits)
    guard = WorkspaceGuard(ws, settings=Settings(home), yolo=Yolo.YOLO)
    surface = Surface(
        BUILTIN, profile("coding"), guard, options=SurfaceOptions(yolo=Yolo.YOLO, commands=gate)
    )
    return Adapter(ToolContext(ws, surface, state_dir=home / "state"), registry.executors())


async def bash(a: Adapter, command: str, **extra: Any) -> dict[str, Any]:
    result: ToolResult = await a.call(
        "run_bash", json.dumps({"command": command, "timeout": SLOW, **extra})
    )
    assert result.ok, result.content
    body: dict[str, Any] = json.loads(result.content)
    return body


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def marker() -> str:
    return f"yagent-limit-{uuid.uuid4().hex[:12]}"


@pytest.fixture
def nap() -> str:
    """A `sleep` word no other process on this machine runs (the ps check is exact)."""
    return f"sleep 300.{uuid.uuid4().int % 10**9:09d}"


def running(needle: str, *, exact: bool = False) -> list[int]:
    """Live (not zombie) processes whose command line carries (or, `exact`, is) `needle`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        hit = cmdline.strip() == needle if exact else needle in cmdline
        if hit and state != "Z":
            found.append(int(entry.name))
    return found


async def host_responsive() -> None:
    assert (await anyio.run_process(["true"], check=False)).returncode == 0


@pytest.mark.anyio
async def test_memory_bomb_ends_with_the_memory_receipt(ws: Path, home: Path) -> None:
    done = await bash(adapter(ws, home), "python3 -c 'b = bytearray(1 << 30); print(len(b))'")
    assert done["receipt"] == "limit"
    assert done["limit"].startswith("killed: memory limit 256 MiB")
    assert "[killed: memory limit 256 MiB" in done["text"]
    assert "1073741824" not in done["text"]


@pytest.mark.anyio
async def test_a_10000_process_flood_is_stopped_at_the_process_limit(
    ws: Path, home: Path, marker: str, nap: str
) -> None:
    a = adapter(ws, home)
    flood = f"for i in $(seq 10000); do {nap} & done; wait # {marker}"
    done = await bash(a, flood)
    assert done["receipt"] == "limit", done["text"][-500:]
    assert done["limit"].startswith("killed: process limit 64 (the sandbox held")
    assert "[killed: process limit 64" in done["text"]
    assert running(marker) == []
    assert running(nap) == []
    assert "jobs" not in done, "what a killed run left is not a job: it was ended with the run"
    await host_responsive()
    after = await bash(a, "echo still-usable")  # the sandbox's count went back down
    assert after["receipt"] == "success"
    assert "still-usable" in after["text"]


@pytest.mark.anyio
async def test_a_fork_bomb_is_stopped_and_leaves_nothing_behind(
    ws: Path, home: Path, marker: str
) -> None:
    a = adapter(ws, home)
    done = await bash(a, f"bomb() {{ bomb | bomb & }}; bomb; sleep 80 # {marker}")
    assert done["receipt"] == "limit", done["text"][-500:]
    assert done["limit"].startswith("killed: process limit 64 (the sandbox held")
    assert running(marker) == []
    await host_responsive()


@pytest.mark.anyio
async def test_cpu_time_and_file_size_limits_name_themselves(ws: Path, home: Path) -> None:
    a = adapter(ws, home)
    spin = await bash(a, "while :; do :; done")
    assert spin["receipt"] == "limit"
    assert spin["limit"].startswith("killed: CPU time limit 2 s")
    big = await bash(a, "head -c 3000000 /dev/zero > big")
    assert big["receipt"] == "limit"
    assert big["limit"].startswith("killed: file size limit 1 MiB")
    assert (ws / "big").stat().st_size == 1024 * 1024


@pytest.mark.anyio
async def test_open_files_are_bounded(ws: Path, home: Path) -> None:
    done = await bash(adapter(ws, home), "ulimit -n; ulimit -Hn")
    assert done["text"].split() == ["256", "256"]
    raise_it = await bash(adapter(ws, home), "ulimit -n 100000")
    assert raise_it["receipt"] != "success", "the hard limit cannot be raised from inside"


@pytest.mark.anyio
async def test_background_runs_count_against_the_same_sandbox(
    ws: Path, home: Path, marker: str, nap: str
) -> None:
    a = adapter(ws, home)
    held = f"for i in $(seq 40); do {nap} & done; wait # {marker}"
    started = await bash(a, held, is_background=True)
    assert "session sandbox" in started["text"], "a job of the session sandbox"
    session = a.ctx.surface.options.commands.session  # type: ignore[union-attr]
    assert session is not None
    try:
        for _ in range(400):  # until the background run holds its 40 (bounded)
            if len(running(nap, exact=True)) == 40:
                break
            await anyio.sleep(0.05)
        assert len(running(nap, exact=True)) == 40
        more = nap.replace("sleep 300.", "sleep 301.")
        done = await bash(a, f"for i in $(seq 40); do {more} & done; wait # {marker}-2")
        assert done["receipt"] == "limit", done["text"][-500:]
        assert running(more) == []
        assert len(running(nap, exact=True)) == 40, "the background run was left alone"
        assert f"job {started['job']} [running]" in done["text"]
    finally:
        notice = await session.close()
    assert notice is not None
    assert notice.startswith("stopped 1 background job(s)"), notice
    assert running(nap) == [], "the job was reaped at session end"


@pytest.mark.anyio
async def test_sandboxed_files_and_git_stay_usable(ws: Path, home: Path) -> None:
    await anyio.run_process(["git", "init", "-q", str(ws)])
    (ws / "root-owned.txt").write_text("host\n")
    a = adapter(ws, home, sandbox.Limits())
    done = await bash(a, "echo more >> root-owned.txt && echo new > made.txt && git status --short")
    assert done["receipt"] == "success", done["text"]
    assert "made.txt" in done["text"]
    assert (ws / "root-owned.txt").read_text() == "host\nmore\n"
    if os.geteuid() == 0:  # the program ran as the mapped non-root user
        assert (ws / "made.txt").stat().st_uid == SANDBOX_UID
    again = await bash(adapter(ws, home, sandbox.Limits()), "echo again >> made.txt")
    assert again["receipt"] == "success", "a later sandbox still owns what an earlier one made"


async def ended(a: Adapter, job: int) -> dict[str, Any]:
    """Job `job` as list_jobs shows it once it no longer runs (bounded wait)."""
    for _ in range(600):
        listed = await a.call("list_jobs", "{}")
        assert listed.ok, listed.content
        found = [j for j in json.loads(listed.content)["jobs"] if j["id"] == job]
        if found and not found[0]["running"]:
            return found[0]  # type: ignore[no-any-return]
        await anyio.sleep(0.05)
    raise AssertionError(f"job {job} still runs")


@pytest.mark.anyio
async def test_a_job_a_limit_ended_says_so_in_list_jobs(ws: Path, home: Path) -> None:
    a = adapter(ws, home)
    memory = await bash(a, "python3 -c 'b = bytearray(1 << 30)'", is_background=True)
    cpu = await bash(a, "while :; do :; done", is_background=True)
    sleeper = await bash(a, "sleep 300", is_background=True)
    mem_job = await ended(a, memory["job"])
    assert mem_job["state"].startswith("killed: memory limit 256 MiB (inferred"), mem_job
    assert mem_job["cause"] == mem_job["state"]
    cpu_job = await ended(a, cpu["job"])
    assert cpu_job["state"] == "killed: CPU time limit 2 s (SIGXCPU)", cpu_job
    killed = await bash(a, f"kill -KILL {sleeper['pid']}")
    assert killed["receipt"] == "success", killed["text"]
    sleep_job = await ended(a, sleeper["job"])
    assert sleep_job["state"] == "killed by SIGKILL (the cause is not known: no limit names itself)"
    assert sleep_job["cause"] is None
    listed = await a.call("list_jobs", "{}")
    assert (
        f"job {cpu['job']} [killed: CPU time limit 2 s (SIGXCPU)]"
        in json.loads(listed.content)["text"]
    )


HOLDER = (
    'python3 -c "import threading, time\n'
    "threading.stack_size(1 << 16)\n"  # not the memory limit: the process limit stops it
    "while True:\n"
    "    try: threading.Thread(target=time.sleep, args=(300,), daemon=True).start()\n"
    "    except RuntimeError: break\n"
    "print('holding', flush=True); time.sleep(300)\""
)


@pytest.mark.anyio
async def test_a_job_holding_the_process_limit_leaves_the_session_usable(
    ws: Path, home: Path
) -> None:
    a = adapter(ws, home)
    holder = await bash(a, HOLDER, is_background=True)
    for _ in range(600):  # until it holds every task the sandbox may have (bounded)
        listed = json.loads((await a.call("list_jobs", "{}")).content)
        if listed["jobs"][0]["last_lines"] == ["holding"]:
            break
        await anyio.sleep(0.05)
    refused = await bash(a, "echo refused-run")
    assert refused["receipt"] != "success"
    assert "at its process limit" in refused["text"], refused["text"]
    assert "refused-run" not in refused["text"]
    assert f"job {holder['job']} [running]" in refused["text"], "the supervisor still answers"
    stopped = await a.call("stop_job", json.dumps({"id": holder["job"]}))
    assert stopped.ok, stopped.content
    assert json.loads(stopped.content)["job"]["state"] == "stopped"
    again = await bash(a, "echo usable-again")
    assert again["receipt"] == "success", again["text"]
    assert "usable-again" in again["text"]
