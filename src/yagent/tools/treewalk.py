"""tools.treewalk: `os.walk` that keeps its place on a list, not on the call stack.

Python 3.11's `os.walk` and `Path.rglob` recurse once per directory level, so a tree deeper
than the recursion limit (about 1 000 levels — 2 000 characters of path, which git checks out
without complaint) raised `RecursionError` out of every walk over a hostile repository.

Contract:
- `walk(root)` yields what `os.walk(root)` (top-down, `followlinks=False`, errors ignored)
  yields, in the same order: `(top, dirs, files)` per directory, depth first, each directory
  before its subdirectories. `dirs` names the entries that are directories (a link to one
  included, as `os.walk` does) and is never descended through a link; pruning `dirs` in place
  prunes the walk.
- No depth limit and no recursion: memory grows with the number of directories waiting, not with
  the interpreter's stack.
- A directory the OS will not open (permissions, a path longer than the OS takes, removed
  meanwhile) is skipped silently, as `os.walk` does; bounding the walk is the caller's job.
"""

from __future__ import annotations

import os
from collections.abc import Iterator


def walk(root: str | os.PathLike[str]) -> Iterator[tuple[str, list[str], list[str]]]:
    """`os.walk(root)` without recursion (see the module contract)."""
    waiting = [os.fspath(root)]
    while waiting:
        top = waiting.pop()
        try:
            with os.scandir(top) as listed:
                entries = list(listed)
        except OSError:
            continue
        dirs: list[str] = []
        files: list[str] = []
        links: set[str] = set()
        for entry in entries:
            try:
                is_dir = entry.is_dir()
            except OSError:
                is_dir = False
            if not is_dir:
                files.append(entry.name)
                continue
            dirs.append(entry.name)
            if entry.is_symlink():
                links.add(entry.name)
        yield top, dirs, files
        waiting.extend(os.path.join(top, d) for d in reversed(dirs) if d not in links)
