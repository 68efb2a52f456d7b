"""search's engine lookup and the rg process: wheel before PATH, killed on stop/timeout/cancel."""

from __future__ import annotations

import os
import signal
import stat
import sysconfig
import threading
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.tools.conftest import make_surface
from yagent.tools import search as search_mod
from yagent.tools.adapter import ToolContext
from yagent.tools.search import search
from yagent.tools.searchkit import rg as rg_mod
from yagent.tools.searchkit.fallback import fallback_search
from yagent.tools.searchkit.locate import Rg, locate_rg
from yagent.tools.searchkit.results import Query, Tally
from yagent.toolspec.params import SearchArgs

MATCH = (
    '{"type":"match","data":{"path":{"text":"%s"},"lines":{"text":"needle\\n"},'
    '"line_number":%d,"absolute_offset":0,"submatches":[{"match":{"text":"needle"},'
    '"start":0,"end":6}]}}'
)


def executable(path: Path, body: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def write_bytes_named(name: bytes, data: bytes) -> None:
    with open(name, "wb") as fh:  # pathlib cannot name a file with undecodable bytes
        fh.write(data)


@pytest.fixture
def ctx(workspace: Path, home: Path) -> ToolContext:
    return ToolContext(workspace, make_surface(workspace, home))


@pytest.fixture
def spawned(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The rg processes search starts, to check how they ended."""
    procs: list[Any] = []
    real = anyio.open_process

    async def recording(*args: Any, **kwargs: Any) -> Any:
        proc = await real(*args, **kwargs)
        procs.append(proc)
        return proc

    monkeypatch.setattr(rg_mod.anyio, "open_process", recording)
    return procs


def test_locate_prefers_the_wheel_then_path(tmp_path: Path) -> None:
    wheel, on_path = tmp_path / "wheel", tmp_path / "path"
    executable(on_path / "rg", "exit 0\n")
    assert locate_rg([str(wheel)], str(on_path)) == Rg(str(on_path / "rg"), "PATH")
    executable(wheel / "rg", "exit 0\n")
    assert locate_rg([str(wheel)], str(on_path)) == Rg(str(wheel / "rg"), "ripgrep wheel")
    assert locate_rg([str(tmp_path / "none")], str(tmp_path / "none")) is None


def test_a_non_executable_wheel_file_is_passed_over(tmp_path: Path) -> None:
    (tmp_path / "rg").write_text("not a program")
    assert locate_rg([str(tmp_path)], str(tmp_path / "empty")) is None


def test_the_installed_wheel_is_found_first() -> None:
    found = locate_rg()
    assert found is not None
    assert found.source == "ripgrep wheel"
    assert os.path.dirname(found.path) == sysconfig.get_path("scripts")


@pytest.mark.anyio
async def test_an_rg_that_cannot_start_falls_back_and_says_why(
    ctx: ToolContext, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(search_mod, "find_rg", lambda: Rg(str(workspace / "gone" / "rg"), "PATH"))
    result = await search(ctx, SearchArgs(pattern="hello"))
    assert result["engine"] == "python-fallback"
    assert "could not be started" in result["note"]
    assert "fallback" in result["note"]
    assert [m["path"] for m in result["matches"]] == ["a.txt"]


@pytest.mark.anyio
async def test_rg_is_killed_once_the_result_is_full(
    ctx: ToolContext, workspace: Path, monkeypatch: pytest.MonkeyPatch, spawned: list[Any]
) -> None:
    target = workspace / "a.txt"
    lines = "\n".join(f"printf '%s\\n' '{MATCH % (target, n)}'" for n in (1, 2, 3))
    fake = executable(workspace.parent / "bin" / "rg", f"{lines}\nexec sleep 60\n")
    monkeypatch.setattr(search_mod, "find_rg", lambda: Rg(str(fake), "PATH"))
    monkeypatch.setattr(search_mod, "COUNT_LIMIT", 2)
    result = await search(ctx, SearchArgs(pattern="needle", max_results=1))
    assert result["more"] is True
    assert result["returned"] == 1
    assert spawned[0].returncode == -signal.SIGKILL  # did not wait the 60 s


@pytest.mark.anyio
async def test_rg_is_killed_on_timeout(
    ctx: ToolContext, workspace: Path, monkeypatch: pytest.MonkeyPatch, spawned: list[Any]
) -> None:
    fake = executable(workspace.parent / "bin" / "rg", "exec sleep 60\n")
    monkeypatch.setattr(search_mod, "find_rg", lambda: Rg(str(fake), "PATH"))
    monkeypatch.setattr(search_mod, "SEARCH_TIMEOUT", 0.0)
    result = await search(ctx, SearchArgs(pattern="needle"))
    assert result["timed_out"] is True
    assert result["engine"] == "ripgrep"
    # Killed at once, often before the shell is running: SIGKILL, or 255 from the spawn.
    assert spawned[0].returncode in (-signal.SIGKILL, 255)


@pytest.mark.anyio
async def test_rg_is_killed_on_cancel(
    ctx: ToolContext, workspace: Path, monkeypatch: pytest.MonkeyPatch, spawned: list[Any]
) -> None:
    started = workspace.parent / "started"
    fake = executable(workspace.parent / "bin" / "rg", f"echo $$ > {started}\nexec sleep 60\n")
    monkeypatch.setattr(search_mod, "find_rg", lambda: Rg(str(fake), "PATH"))
    async with anyio.create_task_group() as tg:
        tg.start_soon(search, ctx, SearchArgs(pattern="needle"))
        with anyio.fail_after(30):
            # The signal comes from another process, so there is no Event to wait on.
            while not started.exists() or not started.read_text().strip():  # noqa: ASYNC110
                await anyio.sleep(0.01)
        tg.cancel_scope.cancel()
    # Ended by us (SIGKILL; under heavy load the exec'd shell may report 255 instead), and the
    # process that was running is really gone — the point of the contract.
    assert spawned[0].returncode in (-signal.SIGKILL, 255)
    with pytest.raises(ProcessLookupError):
        os.kill(int(started.read_text()), 0)


def test_the_fallback_stops_when_told(workspace: Path) -> None:
    stop = threading.Event()
    stop.set()
    tally = Tally(10, 100)
    query = Query("hello", str(workspace.resolve()), str(workspace.resolve()))
    fallback_search(query, tally, keep=None, timeout=60.0, stop=stop)
    assert tally.hits == []
    assert tally.timed_out is False


@pytest.mark.anyio
async def test_undecodable_file_names_are_shown_with_a_replacement_character(
    ctx: ToolContext, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_bytes_named(os.fsencode(workspace) + b"/caf\xe9.txt", b"needle\n")
    shown = []
    for finder in (search_mod.find_rg, lambda: None):
        monkeypatch.setattr(search_mod, "find_rg", finder)
        result = await search(ctx, SearchArgs(pattern="needle"))
        shown.append([m["path"] for m in result["matches"]])
    assert shown[0] == shown[1] == ["caf\ufffd.txt"]


BEGIN = '{"type":"begin","data":{"path":{"text":"%s"}}}'


def _printing(files: list[tuple[Path, list[int]]]) -> str:
    lines = []
    for target, numbers in files:
        lines.append(f"printf '%s\\n' '{BEGIN % target}'")
        lines += [f"printf '%s\\n' '{MATCH % (target, n)}'" for n in numbers]
    return "\n".join(lines)


def fake_rg_printing(path: Path, files: list[tuple[Path, list[int]]], argv_log: Path) -> Path:
    """A fake rg that logs its argv and prints files' matches in the given (unsorted) order,
    or sorted by path when asked for `--sort path`."""
    ordered = sorted(files, key=lambda f: rg_mod.path_key(str(f[0])))
    return executable(
        path,
        f'printf "%s\\n" "$*" >> {argv_log}\n'
        f'case "$*" in\n*"--sort path"*)\n{_printing(ordered)}\n;;\n'
        f"*)\n{_printing(files)}\n;;\nesac\n",
    )


@pytest.mark.anyio
async def test_parallel_output_order_does_not_change_the_kept_lines(
    ctx: ToolContext, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # rg without --sort prints files in whatever order its threads finish: the kept lines are
    # still the first in path order, compared per component (a/ before a-b/, as rg sorts).
    log = workspace.parent / "argv.log"
    files = [
        (workspace / "z.txt", [1]),
        (workspace / "a-b" / "x.txt", [4, 9]),
        (workspace / "a" / "y.txt", [7, 2]),
        (workspace / "m.txt", [3]),
    ]
    fake = fake_rg_printing(workspace.parent / "bin" / "rg", files, log)
    monkeypatch.setattr(search_mod, "find_rg", lambda: Rg(str(fake), "PATH"))
    result = await search(ctx, SearchArgs(pattern="needle", max_results=3))
    shown = [(m["path"], m["line"]) for m in result["matches"]]
    assert shown == [("a/y.txt", 2), ("a/y.txt", 7), ("a-b/x.txt", 4)]
    assert result["total_matches"] == 6
    assert "--sort" not in log.read_text()  # one parallel pass, no sorted one


@pytest.mark.anyio
async def test_count_limit_takes_the_first_lines_from_a_sorted_second_pass(
    ctx: ToolContext, workspace: Path, monkeypatch: pytest.MonkeyPatch, spawned: list[Any]
) -> None:
    log = workspace.parent / "argv.log"
    files = [(workspace / "b.txt", [1, 2]), (workspace / "a.txt", [5])]
    fake = fake_rg_printing(workspace.parent / "bin" / "rg", files, log)
    monkeypatch.setattr(search_mod, "find_rg", lambda: Rg(str(fake), "PATH"))
    monkeypatch.setattr(search_mod, "COUNT_LIMIT", 2)
    result = await search(ctx, SearchArgs(pattern="needle", max_results=1))
    assert result["more"] is True
    passes = log.read_text().splitlines()
    assert len(passes) == 2
    assert "--sort path" not in passes[0]
    assert "--sort path" in passes[1]
    assert [(m["path"], m["line"]) for m in result["matches"]] == [("a.txt", 5)]
    assert all(proc.returncode is not None for proc in spawned)


@pytest.mark.anyio
async def test_real_rg_and_the_fallback_agree_on_component_order(
    ctx: ToolContext, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("a-b/x.txt", "a/x.txt", "a.c/x.txt", "a0/x.txt", "A/x.txt", "a/b/c.txt"):
        (workspace / name).parent.mkdir(parents=True, exist_ok=True)
        (workspace / name).write_text("needle\n" * 3)
    shown = []
    for finder in (search_mod.find_rg, lambda: None):
        monkeypatch.setattr(search_mod, "find_rg", finder)
        result = await search(ctx, SearchArgs(pattern="needle", max_results=7))
        shown.append([(m["path"], m["line"]) for m in result["matches"]])
        assert result["total_matches"] == 18
    assert shown[0] == shown[1]
    assert shown[0][:4] == [("A/x.txt", 1), ("A/x.txt", 2), ("A/x.txt", 3), ("a/b/c.txt", 1)]
