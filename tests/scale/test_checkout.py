"""A task's checkout (`scale.checkout`) with real git: a removal cut short never leaves a
half-deleted checkout that the next attempt of the task would take as ready."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_attacks_shapes import cleaned, deep_tree
from yagent.scale import checkout

__all__ = ["cleaned"]  # the fixture, imported


class Killed(BaseException):
    """The worker process dying mid-removal (nothing after it runs)."""


def git(*args: str, cwd: Path) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True)
    return done.stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    path.mkdir()
    git("init", "-q", cwd=path)
    (path / "README").write_text("hello\n")
    git("add", "README", cwd=path)
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "first", cwd=path)
    return path


def killed_after_objects(real: Callable[..., Any]) -> Callable[..., Any]:
    """An rmtree that deletes a checkout's object store, then dies (its marker not yet gone)."""

    def rmtree(path: Path) -> None:
        objects = path / ".git" / "objects"
        if objects.is_dir():
            real(objects)
            raise Killed
        real(path)

    return rmtree


def test_a_removal_cut_short_is_never_taken_as_a_ready_checkout(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dest = tmp_path / "work" / "batch" / "task"
    base = checkout.prepare(str(repo), "HEAD", dest)
    (dest / "new.txt").write_text("the lost attempt's work\n")
    monkeypatch.setattr(checkout, "rmtree", killed_after_objects(checkout.rmtree))
    with pytest.raises(Killed):
        checkout.remove(dest)  # the worker dies half-way through the task's cleanup
    monkeypatch.undo()
    assert checkout.prepare(str(repo), "HEAD", dest) == base  # the retry, on a shared folder
    assert not (dest / "new.txt").exists(), "a fresh checkout, not the half-deleted one"
    assert "README" not in checkout.patch(dest, base)  # git works in it: nothing changed
    checkout.remove(dest)
    assert sorted(p.name for p in dest.parent.iterdir()) == [], "the leftovers went too"


def test_a_checkout_deeper_than_the_recursion_limit_is_removed(repo: Path, cleaned: Path) -> None:
    dest = cleaned / "work" / "batch" / "task"
    checkout.prepare(str(repo), "HEAD", dest)
    deep_tree(dest)  # what a task (or the repository) left in its checkout
    checkout.remove(dest)  # shutil.rmtree raised RecursionError here
    assert sorted(p.name for p in dest.parent.iterdir()) == []
