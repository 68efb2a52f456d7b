"""run_bash inside bubblewrap under the `workspace-write` preset: real bwrap, real commands."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import pytest

from yagent.kernel.judge.preset import BUILTIN as PRESETS
from yagent.tools import registry, shell
from yagent.tools.adapter import Adapter, ToolContext
from yagent.tools.bash import SANDBOXED_BACKGROUND_NOTE
from yagent.tools.commands import CommandGate
from yagent.tools.guard import WorkspaceGuard
from yagent.tools.settings import Settings
from yagent.tools.shellrules import build_policy
from yagent.tools.surface import Surface, SurfaceOptions
from yagent.tools.toolresult import ToolResult
from yagent.tools.yolo import Yolo
from yagent.toolspec.builtin import BUILTIN
from yagent.toolspec.profiles import profile


def adapter(ws: Path, home: Path, preset: str = "workspace-write") -> Adapter:
    gate = CommandGate(build_policy([]), PRESETS.resolve(preset), ws)
    guard = WorkspaceGuard(ws, settings=Settings(home), yolo=Yolo.YOLO)  # -y: nobody is asked
    surface = Surface(
        BUILTIN, profile("coding"), guard, options=SurfaceOptions(yolo=Yolo.YOLO, commands=gate)
    )
    return Adapter(ToolContext(ws, surface, state_dir=home / "state"), registry.executors())


async def bash(a: Adapter, command: str, **extra: Any) -> dict[str, Any]:
    result: ToolResult = await a.call("run_bash", json.dumps({"command": command, **extra}))
    assert result.ok, result.content
    body: dict[str, Any] = json.loads(result.content)
    return body


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / ".git").mkdir(parents=True)
    (root / ".git" / "config").write_text("[core]\n")
    return root


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.mark.anyio
async def test_workspace_writable_git_and_yagent_read_only(ws: Path, home: Path) -> None:
    a = adapter(ws, home)
    done = await bash(a, "echo work > file.txt && mkdir -p src && echo x > src/y")
    assert done["receipt"] == "success"
    assert (ws / "file.txt").read_text() == "work\n"
    assert (ws / "src" / "y").exists()
    for target in (".git/x", ".git/config", ".yagent/shell-rules.toml"):
        failed = await bash(a, f"echo evil > {target}")
        assert failed["receipt"] == "exit_nonzero"
        assert "Read-only file system" in failed["text"]
    assert not (ws / ".git" / "x").exists()
    assert (ws / ".git" / "config").read_text() == "[core]\n"
    assert not (ws / ".yagent" / "shell-rules.toml").exists()
    read = await bash(a, "cat .git/config")
    assert "[core]" in read["text"], ".git stays readable"


@pytest.mark.anyio
async def test_root_is_read_only_tmp_private_network_absent(ws: Path, home: Path) -> None:
    a = adapter(ws, home)
    outside = f"/var/tmp/yagent-sandbox-{os.getpid()}"  # on the root filesystem
    root = await bash(a, f"echo x > {outside}")
    assert root["receipt"] == "exit_nonzero"
    assert "Read-only file system" in root["text"]
    assert not _exists(outside)
    marker = f"/tmp/yagent-sandbox-{os.getpid()}"
    tmp = await bash(a, f"echo x > {marker} && cat {marker}")
    assert tmp["receipt"] == "success"
    assert not _exists(marker), "/tmp inside is private"
    net = await bash(a, "cat /proc/net/dev")
    interfaces = {line.split(":", 1)[0].strip() for line in net["text"].splitlines() if ":" in line}
    assert interfaces == {"lo"}


@pytest.mark.anyio
async def test_secrets_stay_outside(ws: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-secret")
    monkeypatch.setenv("YAGENT_PLAIN", "visible")
    a = adapter(ws, home)
    env = await bash(a, "env")
    assert "sk-ant-secret" not in env["text"]
    assert "YAGENT_PLAIN=visible" in env["text"]


def _exists(path: str) -> bool:
    return Path(path).exists()


def _read(path: Path) -> str:
    return path.read_text() if path.exists() else ""


def _running(needle: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            state = (entry / "stat").read_text().split()[2]
        except OSError:
            continue
        if needle in cmdline and state != "Z":
            found.append(int(entry.name))
    return found


async def _gone(needle: str) -> bool:
    with anyio.move_on_after(10):
        while _running(needle):  # noqa: ASYNC110 - nothing signals the death of a process
            await anyio.sleep(0.05)
        return True
    return False


@pytest.mark.anyio
async def test_a_timeout_kills_the_sandbox_and_everything_in_it(ws: Path, home: Path) -> None:
    a = adapter(ws, home)
    needle = f"31.{os.getpid()}"
    done = await bash(a, f"sleep {needle} & sleep {needle}", timeout=0.5)
    assert done["receipt"] == "timeout"
    assert await _gone(needle)
    assert shell.live_groups() == ()


@pytest.mark.anyio
async def test_cancellation_kills_the_sandbox(ws: Path, home: Path) -> None:
    a = adapter(ws, home)
    needle = f"32.{os.getpid()}"
    with anyio.move_on_after(1):
        await a.call("run_bash", json.dumps({"command": f"sleep {needle}"}))
    assert await _gone(needle)


@pytest.mark.anyio
async def test_background_runs_in_the_sandbox_too(ws: Path, home: Path) -> None:
    a = adapter(ws, home)
    started = await bash(
        a, "echo started > bg.txt; echo evil > .git/x; echo done >> bg.txt", is_background=True
    )
    assert "in the session sandbox" in started["text"]
    with anyio.fail_after(20):  # a bound, not a timing: nothing signals a background run's end
        while "done" not in _read(ws / "bg.txt"):  # noqa: ASYNC110
            await anyio.sleep(0.05)
    assert not (ws / ".git" / "x").exists()
    with anyio.fail_after(20):
        while "Read-only file system" not in _read(Path(started["log_path"])):  # noqa: ASYNC110
            await anyio.sleep(0.05)


@pytest.mark.anyio
async def test_yolo_runs_on_the_host(ws: Path, home: Path) -> None:
    a = adapter(ws, home, preset="yolo")
    done = await bash(a, "echo host > .git/x && cat /proc/net/dev")
    assert done["receipt"] == "success"
    assert (ws / ".git" / "x").read_text() == "host\n"
    background = await bash(a, "true", is_background=True)
    assert SANDBOXED_BACKGROUND_NOTE not in background["text"]
