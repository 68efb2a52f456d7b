"""Workspace guard: realpath judgement, the shell's defence."""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from yagent.tools.guard import SAFE_SYSTEM_PATHS, WorkspaceGuard, is_safe_system_path
from yagent.tools.settings import Settings, SettingsError
from yagent.tools.yolo import Yolo
from yagent.toolspec.builtin import builtin_by_name

SPECS = builtin_by_name()
READ, WRITE, BASH = SPECS["read_file"], SPECS["write_file"], SPECS["run_bash"]


def test_workspace_itself_is_outside_for_destructive_ops(workspace: Path) -> None:
    guard = WorkspaceGuard(workspace)
    assert guard.in_workspace(".")
    assert not guard.in_workspace(".", destructive=True)
    assert guard.boundary(WRITE, {"path": "."}) is not None
    assert "workspace directory itself" in (guard.boundary(WRITE, {"path": str(workspace)}) or "")
    assert guard.boundary(WRITE, {"path": "a.txt"}) is None
    assert guard.boundary(READ, {"path": "."}) is None


def test_paths_judged_after_realpath(workspace: Path, tmp_path: Path) -> None:
    outside = tmp_path / "secret"
    outside.mkdir()
    (workspace / "link").symlink_to(outside)
    guard = WorkspaceGuard(workspace)
    assert guard.boundary(READ, {"path": "link/x"}) is not None
    assert guard.boundary(READ, {"path": "sub/../../secret/x"}) is not None
    assert guard.boundary(READ, {"path": "sub/../a.txt"}) is None
    assert guard.boundary(READ, {"path": str(outside / "x")}) is not None
    assert guard.boundary(READ, {"path": "~/.ssh/id_rsa"}) is not None


def test_workspace_given_through_a_symlink(tmp_path: Path, workspace: Path) -> None:
    alias = tmp_path / "alias"
    alias.symlink_to(workspace)
    guard = WorkspaceGuard(alias)
    assert guard.boundary(READ, {"path": str(workspace / "a.txt")}) is None


def test_shell_has_no_blacklist_but_flags_and_outside_paths(workspace: Path) -> None:
    guard = WorkspaceGuard(workspace)
    assert guard.danger(BASH, {"command": "rm -rf build"}) is None  # no blacklist by design
    assert "marked" in (guard.danger(BASH, {"command": "rm -rf build", "is_dangerous": True}) or "")
    assert guard.danger(BASH, {"command": "cat /etc/shadow"}) is not None
    assert guard.danger(BASH, {"command": "cp x ~/.bashrc"}) is not None
    assert guard.danger(BASH, {"command": "tool --out=/etc/x"}) is not None
    assert guard.danger(BASH, {"command": "echo hi >/etc/passwd"}) is not None
    assert guard.danger(BASH, {"command": f"cat {workspace}/a.txt"}) is None
    assert guard.danger(BASH, {"command": "ls > /dev/null 2>&1"}) is None
    assert guard.danger(BASH, {"command": "/usr/bin/python3 -V"}) is None
    assert "unclosed" in (guard.danger(BASH, {"command": "echo 'oops"}) or "")
    assert guard.danger(BASH, {"command": 42}) is not None


def test_root_is_always_dangerous(workspace: Path) -> None:
    guard = WorkspaceGuard(workspace)
    assert "root" in (guard.danger(BASH, {"command": "rm -rf /"}) or "")
    assert "root" in (guard.danger(BASH, {"command": "ls /tmp/../"}) or "")
    assert not is_safe_system_path("/")
    assert is_safe_system_path("/dev/null")
    assert not is_safe_system_path("/devx")
    assert all(p.startswith("/") and p != "/" for p in SAFE_SYSTEM_PATHS)


def test_yolo_bypasses_everything_including_outside(workspace: Path) -> None:
    assert WorkspaceGuard(workspace, yolo=Yolo.YOLO).standing(BASH)
    assert WorkspaceGuard(workspace, yolo=Yolo.FULL).standing(READ)
    assert not WorkspaceGuard(workspace).standing(BASH)


def test_session_permissions(workspace: Path) -> None:
    guard = WorkspaceGuard(workspace)
    guard.allow_tool_for_session("run_bash")
    assert guard.standing(BASH)
    assert not guard.standing(WRITE)
    guard.skip_all_for_session()
    assert guard.standing(WRITE)


def test_project_permission_persisted_atomically(workspace: Path, home: Path) -> None:
    settings = Settings(home)
    guard = WorkspaceGuard(workspace, settings=settings)
    assert not guard.standing(BASH)
    settings.authorize_project(workspace)
    settings.authorize_project(workspace)  # idempotent
    assert guard.standing(BASH)
    data = json.loads((home / "settings.json").read_text())
    assert data["authorized_projects"] == [os.path.realpath(workspace)]
    assert not list(home.glob(".settings.*")), "no temp file left behind"


def test_corrupt_settings_reported_never_overwritten(workspace: Path, home: Path) -> None:
    path = home / "settings.json"
    path.write_text("{not json")
    settings = Settings(home)
    with pytest.raises(SettingsError, match="will not overwrite"):
        settings.authorize_project(workspace)
    assert path.read_text() == "{not json"
    assert not WorkspaceGuard(workspace, settings=settings).standing(BASH)
    path.write_text("[1]")
    with pytest.raises(SettingsError, match="JSON object"):
        settings.load()
    path.write_text('{"authorized_projects": "x"}')
    with pytest.raises(SettingsError, match="list of paths"):
        settings.authorized_projects()
    with pytest.raises(SettingsError, match="list of paths"):
        settings.authorize_project(workspace)


def test_settings_missing_file_is_empty(home: Path) -> None:
    assert Settings(home / "nowhere").load() == {}


def test_standing_permission_reads_an_unchanged_settings_file_once(
    workspace: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from yagent.tools import settings as settings_module

    reads: list[Path] = []
    real = settings_module.read_json

    def counting(path: Path, *args: object, **kwargs: object) -> object:
        reads.append(path)
        return real(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(settings_module, "read_json", counting)
    path = home / "settings.json"
    path.write_text('{"authorized_projects": []}')
    os.utime(path, (1_000_000_000, 1_000_000_000))  # long unchanged
    guard = WorkspaceGuard(workspace, settings=Settings(home))
    assert not guard.standing(BASH)
    assert not guard.standing(BASH)
    assert len(reads) == 1
    Settings(home).authorize_project(workspace)  # another writer: a new file in its place
    assert guard.standing(BASH)


def test_a_settings_file_changed_just_now_is_read_again(
    workspace: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from yagent.tools import settings as settings_module

    reads: list[Path] = []
    real = settings_module.read_json

    def counting(path: Path, *args: object, **kwargs: object) -> object:
        reads.append(path)
        return real(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(settings_module, "read_json", counting)
    path = home / "settings.json"
    path.write_text('{"authorized_projects": []}')
    # a rewrite the time stamps cannot tell apart (same inode, size, mtime and ctime, as within
    # their granularity): only the file's freshness makes the guard read it again
    same = ((1, 2, 3, 4), time.time())
    monkeypatch.setattr(settings_module, "_stamp", lambda _path: same)
    guard = WorkspaceGuard(workspace, settings=Settings(home))
    assert not guard.standing(BASH)
    path.write_text(json.dumps({"authorized_projects": [os.path.realpath(workspace)]}))
    assert guard.standing(BASH)
    assert len(reads) == 2


def test_a_missing_settings_file_is_looked_for_not_read_and_seen_when_it_appears(
    workspace: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from yagent.tools import settings as settings_module

    reads: list[Path] = []
    real = settings_module.read_json

    def counting(path: Path, *args: object, **kwargs: object) -> object:
        reads.append(path)
        return real(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(settings_module, "read_json", counting)
    guard = WorkspaceGuard(workspace, settings=Settings(home))
    assert not guard.standing(BASH)
    assert not guard.standing(BASH)
    assert len(reads) == 1
    Settings(home).authorize_project(workspace)
    assert guard.standing(BASH)


def _nested_past_path_max(root: Path, levels: int = 25) -> Path:
    """Real directories nested past PATH_MAX under `root` (made by descriptor); the deepest."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(levels):
            os.mkdir("d" * 200, dir_fd=fd)
            inner = os.open("d" * 200, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = inner
        os.symlink("../" * levels + ".git", "g", dir_fd=fd)
    finally:
        os.close(fd)
    return root.joinpath(*["d" * 200] * levels)  # (pathlib does not resolve it)


@pytest.fixture
def past_path_max(tmp_path: Path) -> Iterator[Path]:
    """`_nested_past_path_max` under `tmp_path`, removed afterwards (not left for the shared
    temp root's cleaners)."""
    yield _nested_past_path_max(tmp_path)
    shutil.rmtree(tmp_path / ("d" * 200))


def test_a_path_too_long_to_resolve_is_refused_for_every_tool(
    tmp_path: Path, past_path_max: Path
) -> None:
    (tmp_path / ".git").mkdir()
    deep = past_path_max
    guard = WorkspaceGuard(tmp_path, yolo=Yolo.YOLO)
    write, read = SPECS["write_file"], SPECS["read_file"]
    given = os.path.relpath(deep, tmp_path) + "/g/hooks/pre-commit"
    assert guard.protected(write, {"path": given}) is None  # what realpath alone concluded
    for spec in (write, read):
        reason = guard.unresolvable(spec, {"path": given})
        assert reason is not None
        assert "too long to resolve" in reason
    # short as given, long once a link is followed
    (tmp_path / "s").symlink_to("/".join(["d" * 200] * 12))
    short = "s/" + "/".join(["d" * 200] * 13) + "/g/hooks/pre-commit"
    assert len(os.fsencode(os.path.join(tmp_path, short))) < 4096
    assert guard.unresolvable(write, {"path": short}) is not None
    assert guard.unresolvable(write, {"path": "a/b.txt"}) is None
