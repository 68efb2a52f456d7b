"""bubblewrap with a read-only workspace and declared writable areas, against the real `bwrap`."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from yagent.kernel.confine.sandbox import BwrapProvider, Program, UnavailableError

pytestmark = pytest.mark.anyio

_SHOWN = [sys.prefix] if sys.prefix.startswith(("/tmp/", "/run/")) else []


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    for d in (".git", "docs", "src"):
        (root / d).mkdir(parents=True)
    (root / "notes.txt").write_text("notes\n")
    return root


def confined(ws: Path, *areas: str) -> BwrapProvider:
    return BwrapProvider(
        ws,
        protected=[".git", ".yagent"],
        readable=_SHOWN,
        workspace_writable=False,
        writable=[ws / a for a in areas],
    )


async def sh(box: BwrapProvider, script: str) -> tuple[int, str]:
    result = await box.run(Program(["sh", "-c", script]))
    return result.exit_code, result.text


async def test_only_the_writable_areas_can_be_written(ws: Path) -> None:
    box = confined(ws, "docs", "notes.txt")
    code, text = await sh(box, "echo x > src/other.txt")
    assert code != 0
    assert "Read-only file system" in text
    assert not (ws / "src" / "other.txt").exists()
    code, text = await sh(box, "echo x > top.txt")
    assert code != 0
    assert "Read-only file system" in text
    code, _ = await sh(box, "echo ok > docs/a.txt && mkdir docs/sub && echo more >> notes.txt")
    assert code == 0
    assert (ws / "docs" / "a.txt").read_text() == "ok\n"
    assert (ws / "docs" / "sub").is_dir()
    assert (ws / "notes.txt").read_text() == "notes\nmore\n"
    code, text = await sh(box, "cat src/../notes.txt && ls src")
    assert code == 0  # the rest of the workspace stays readable
    assert "notes" in text


async def test_protected_paths_stay_read_only_inside_a_writable_area(ws: Path) -> None:
    box = confined(ws, ".")
    code, text = await sh(box, "echo x > .git/HEAD")
    assert code != 0
    assert "Read-only file system" in text
    code, _ = await sh(box, "echo ok > anywhere.txt")
    assert code == 0
    code, _ = await sh(box, "mkdir .yagent/x")  # masked because a writable area covers it
    assert code != 0


def test_the_mount_order_lets_the_areas_win_and_the_protected_paths_win_last(ws: Path) -> None:
    box = confined(ws, "docs")
    joined = " ".join(box.command(Program(["true"])))
    assert f"--bind {ws} {ws}" not in joined
    ro = joined.index(f"--ro-bind {ws} {ws}")
    area = joined.index(f"--bind {ws}/docs {ws}/docs")
    git = joined.index(f"--ro-bind {ws}/.git {ws}/.git")
    assert ro < area < git
    assert ".yagent" not in joined  # missing under a read-only workspace: nothing can create it


async def test_a_missing_protected_path_needs_no_mask_below_a_read_only_workspace(
    ws: Path,
) -> None:
    code, _ = await sh(confined(ws, "docs"), "true")
    assert code == 0
    assert not (ws / ".yagent").exists()


def test_a_writable_path_is_taken_literally(ws: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (ws / "link").symlink_to(outside)
    (ws / "docs" / "inner").symlink_to(outside)
    with pytest.raises(UnavailableError, match="symbolic link"):
        confined(ws, "link")
    with pytest.raises(UnavailableError, match="symbolic link"):
        confined(ws, "link/deeper")
    with pytest.raises(UnavailableError, match="symbolic link"):
        confined(ws, "docs/inner")
    with pytest.raises(UnavailableError, match="does not exist"):
        confined(ws, "missing")
    os.mkfifo(ws / "pipe")
    with pytest.raises(UnavailableError, match="neither a file nor a directory"):
        confined(ws, "pipe")
    with pytest.raises(UnavailableError, match="root directory"):
        BwrapProvider(ws, writable=["/"])


@pytest.mark.parametrize("area", [".git", ".git/hooks", "sub/.git/hooks", ".yagent", "x/.Yagent"])
def test_a_writable_area_in_a_protected_path_is_refused(ws: Path, area: str) -> None:
    """A protected path stays read-only whatever the host declares: a writable area at or below
    one (by path, or by protected name at any depth, any case) would be the deeper bind and win."""
    (ws / area).mkdir(parents=True, exist_ok=True)
    with pytest.raises(UnavailableError, match="protected"):
        BwrapProvider(
            ws,
            protected=[".git", ".yagent"],
            protected_names=[".git", ".yagent"],
            workspace_writable=False,
            writable=[ws / area],
        )


async def test_a_writable_area_holding_a_protected_path_keeps_it_read_only(ws: Path) -> None:
    box = confined(ws, ".")
    code, text = await sh(box, "echo x > .git/config")
    assert code != 0
    assert "Read-only file system" in text
