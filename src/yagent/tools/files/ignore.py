"""files.ignore: which paths `.gitignore` files exclude, with git's own rules (via `pathspec`).

Contract:
- Patterns have gitwildmatch semantics (`pathspec.GitIgnoreSpec`): globs, `**`, anchoring by a
  leading or inner `/`, directory-only patterns with a trailing `/`, and `!` negations; within one
  file the last matching pattern decides.
- Nested `.gitignore` files apply to their own directory and below, relative to it; a deeper file
  that has a matching pattern (ignore or negation) overrides the shallower ones.
- `.git/` is always excluded, whatever the patterns say.
- The chain for a walk starts at the repository top: the nearest ancestor of the walked root that
  holds `.git` (the root itself included); without one, at the root. `.gitignore` files between
  the top and the root apply too.
- Given the directory's descriptor, `load` reads its `.gitignore` through it with `O_NOFOLLOW`
  (a walk reading by descriptor reads the directory it lists); a `.gitignore` that is a symbolic
  link there is not read.
- Not read: `.git/info/exclude` and the user's global excludes file (they are personal, not the
  project's). An unreadable `.gitignore` is treated as empty.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pathspec

ALWAYS_SKIPPED = frozenset({".git"})


@dataclass(frozen=True, slots=True)
class Level:
    base: Path  # the directory holding the .gitignore
    spec: pathspec.GitIgnoreSpec


def _read(directory: Path, dir_fd: int | None) -> str:
    if dir_fd is None:
        return (directory / ".gitignore").read_text(encoding="utf-8", errors="replace")
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    with open(os.open(".gitignore", flags, dir_fd=dir_fd), "rb") as f:
        return f.read().decode("utf-8", errors="replace")


def load(directory: Path, dir_fd: int | None = None) -> Level | None:
    try:
        text = _read(directory, dir_fd)
    except OSError:
        return None
    lines = text.splitlines()
    if not any(line.strip() and not line.startswith("#") for line in lines):
        return None
    return Level(directory, pathspec.GitIgnoreSpec.from_lines(lines))


def repository_top(root: Path) -> Path:
    for candidate in (root, *root.parents):
        if (candidate / ".git").exists():
            return candidate
    return root


def ancestor_levels(root: Path) -> list[Level]:
    """The `.gitignore` levels above `root` up to the repository top, shallowest first."""
    top = repository_top(root)
    if top == root:
        return []
    between = root.relative_to(top).parents[:-1]  # "a/b/c" → a/b, a (without ".")
    chain = [top, *(top / rel for rel in reversed(between))]
    return [level for d in chain if (level := load(d)) is not None]


def is_ignored(levels: list[Level], path: Path, is_dir: bool) -> bool:
    """Whether `path` is excluded by the chain `levels` (shallowest first)."""
    if path.name in ALWAYS_SKIPPED:
        return True
    for level in reversed(levels):
        rel = os.path.relpath(path, level.base).replace(os.sep, "/")
        result = level.spec.check_file(rel + "/" if is_dir else rel)
        if result.include is not None:
            return bool(result.include)
    return False
