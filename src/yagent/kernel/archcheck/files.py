"""Which files the gate looks at, and the one glob dialect its policy speaks.

Globs are matched against repo-relative posix paths: `*` and `?` stay inside one path segment,
`**` spans any number of segments (including none), so `src/**/*.py` matches `src/a.py` and
`src/a/b/c.py`. The walk skips hidden directories (`.git`, `.venv`, ...), `__pycache__` and
`*.egg-info`: they are tooling state, not the tree under judgement.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator
from functools import lru_cache
from pathlib import Path


def _skipped_dir(name: str) -> bool:
    return name.startswith(".") or name == "__pycache__" or name.endswith(".egg-info")


def walk(root: Path, start: str = "") -> Iterator[str]:
    """Yield repo-relative posix paths of every file below `root / start`, sorted, skipping tooling
    directories."""
    base = root / start if start else root
    if not base.is_dir():
        return
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames[:] = sorted(d for d in dirnames if not _skipped_dir(d))
        rel_dir = Path(dirpath).relative_to(root).as_posix()
        for name in sorted(filenames):
            yield name if rel_dir == "." else f"{rel_dir}/{name}"


def python_files(root: Path, start: str = "") -> list[str]:
    return [p for p in walk(root, start) if p.endswith(".py")]


@lru_cache(maxsize=256)
def glob_regex(pattern: str) -> re.Pattern[str]:
    """Translate one policy glob into an anchored regular expression."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:[^/]+/)*")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out) + r"\Z")


def matches_any(path: str, globs: Iterable[str]) -> bool:
    return any(glob_regex(g).match(path) for g in globs)


def read_text(root: Path, rel: str) -> str:
    """Read a source file as text; undecodable bytes become U+FFFD rather than aborting the gate."""
    return (root / rel).read_text(encoding="utf-8", errors="replace")
