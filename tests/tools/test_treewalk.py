"""tools.treewalk: the same walk as `os.walk`, and no recursion — through every walk that uses it
(the `@` completion's file list, a `deny_read` pattern's matches) on a tree deeper than the
recursion limit (`os.walk` raised `RecursionError` on it)."""

from __future__ import annotations

import os
from pathlib import Path

from tests.e2e.test_attacks_shapes import cleaned, deep_tree
from yagent.cli.prompt import workspace_files
from yagent.tools import readpatterns
from yagent.tools.treewalk import walk

__all__ = ["cleaned"]  # the fixture, imported


def _tree(root: Path) -> None:
    for rel in ("a/b/c.txt", "a/d.txt", "e/f/g/h.txt", "top.txt", "skip/x.txt", "skip/y/z.txt"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(rel)
    (root / "outside").mkdir()
    (root / "outside" / "o.txt").write_text("o")
    (root / "a" / "to_outside").symlink_to(root / "outside")
    (root / "a" / "to_file").symlink_to(root / "top.txt")
    (root / "dangling").symlink_to(root / "nowhere")


def _listing(walked: object) -> list[tuple[str, list[str], list[str]]]:
    out = []
    for top, dirs, files in walked:  # type: ignore[attr-defined]
        dirs.sort()
        if "skip" in dirs:
            dirs.remove("skip")  # pruning in place prunes the walk
        out.append((top, list(dirs), sorted(files)))
    return out


def test_walk_yields_what_os_walk_yields_in_the_same_order(tmp_path: Path) -> None:
    _tree(tmp_path)
    assert _listing(walk(tmp_path)) == _listing(os.walk(tmp_path))
    tops = [top for top, _, _ in walk(tmp_path)]
    assert str(tmp_path / "a" / "to_outside") not in tops  # a link is listed, never entered
    assert not any("skip" in top for top, _, _ in _listing(walk(tmp_path)))


def test_walks_over_a_tree_deeper_than_the_recursion_limit(cleaned: Path) -> None:
    tmp_path = cleaned
    bottom = deep_tree(tmp_path, 1_100)
    (tmp_path / bottom / "key.pem").write_text("k")
    assert sum(1 for _ in walk(tmp_path)) == 1_101
    assert workspace_files(tmp_path) == [f"{bottom}/key.pem"]
    pattern = readpatterns.split("*.pem", tmp_path, tmp_path)
    assert isinstance(pattern, readpatterns.Pattern)
    assert pattern.existing() == [tmp_path / bottom / "key.pem"]
