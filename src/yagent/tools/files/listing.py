"""files.listing: `list_dir` and `print_dir_tree`.

Contract:
- `list_dir` lists every entry of one directory (hidden and ignored ones included: it is the plain
  view), sorted by name, directories marked with a trailing `/`, at most `MAX_LIST_ENTRIES` of them;
  when more exist the result says so (`truncated`, `total`, a note) — the first entries by name
  are kept, never an arbitrary subset.
- `print_dir_tree` shows the tree below a directory up to `max_depth` levels (1 = the root's own
  entries), two spaces of indent a level, directories with a trailing `/`, symbolic links as
  `name -> target` and never followed (no cycles, no escaping the tree). It respects `.gitignore`
  as git does (`files.ignore`, gitwildmatch via `pathspec`: nested files, negations) and always
  skips `.git/`. At most `MAX_TREE_ENTRIES` entries are shown; past that the listing ends with a
  visible marker and `truncated: true`. It also reports how many entries `.gitignore` hid and
  whether `max_depth` left directories unexpanded.
- Names that are not valid UTF-8 are listed with each undecodable byte as `\\xNN`
  (`common.name_text`); the same spelling given back to a file tool opens that file.
- Refused: a missing path (NOT_FOUND), a path that is not a directory (INVALID_ARGS).
Both walk the disk in a worker thread (`anyio.to_thread`): trees can be large.
"""

from __future__ import annotations

import functools
import heapq
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio.to_thread

from yagent.tools.adapter import ToolContext
from yagent.tools.files import common, ignore
from yagent.toolspec.params import DirTreeArgs, ListDirArgs

MAX_LIST_ENTRIES = 1000
MAX_TREE_ENTRIES = 500


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def _list_sync(resolved: Path, given: str, shown: str) -> dict[str, Any]:
    common.stat_directory(resolved, given)
    total = 0

    def names() -> Iterator[str]:
        nonlocal total
        with os.scandir(resolved) as it:
            for entry in it:
                total += 1
                yield common.name_text(entry.name) + ("/" if _is_dir(entry) else "")

    # nsmallest keeps memory bounded by the cap, whatever the directory holds.
    entries = heapq.nsmallest(MAX_LIST_ENTRIES, names(), key=lambda n: n.rstrip("/"))
    result: dict[str, Any] = {
        "path": shown,
        "entries": entries,
        "count": len(entries),
        "total": total,
        "truncated": total > len(entries),
    }
    if result["truncated"]:
        result["note"] = (
            f"showing the first {len(entries)} of {total} entries by name (cap "
            f"{MAX_LIST_ENTRIES}); list a subdirectory or use search to narrow down"
        )
    return result


@dataclass(slots=True)
class _Walk:
    max_depth: int
    lines: list[str] = field(default_factory=list)
    shown: int = 0
    ignored: int = 0
    depth_limited: bool = False
    truncated: bool = False


def _entries(directory: Path) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(directory) as it:
            return sorted(it, key=lambda e: e.name)
    except OSError:
        return []  # unreadable directories are shown, just not expanded


def _walk(walk: _Walk, directory: Path, depth: int, levels: list[ignore.Level]) -> None:
    level = ignore.load(directory)
    if level is not None:
        levels = [*levels, level]
    indent = "  " * depth
    for entry in _entries(directory):
        path = Path(entry.path)
        is_link = entry.is_symlink()
        is_dir = not is_link and _is_dir(entry)
        if ignore.is_ignored(levels, path, is_dir):
            walk.ignored += 1
            continue
        if walk.shown >= MAX_TREE_ENTRIES:
            walk.truncated = True
            return
        walk.shown += 1
        if is_link:
            target = common.name_text(os.readlink(path))
            walk.lines.append(f"{indent}{common.name_text(entry.name)} -> {target}")
        elif is_dir:
            walk.lines.append(f"{indent}{common.name_text(entry.name)}/")
            if depth + 1 < walk.max_depth:
                _walk(walk, path, depth + 1, levels)
                if walk.truncated:
                    return
            else:
                walk.depth_limited = True
        else:
            walk.lines.append(f"{indent}{common.name_text(entry.name)}")


def _tree_sync(resolved: Path, given: str, shown: str, max_depth: int) -> dict[str, Any]:
    common.stat_directory(resolved, given)
    walk = _Walk(max_depth)
    _walk(walk, resolved, 0, ignore.ancestor_levels(resolved))
    header = "./" if shown == "." else shown.rstrip("/") + "/"
    lines = [header] + ["  " + line for line in walk.lines]
    if walk.truncated:
        lines.append(f"… [truncated: showing the first {MAX_TREE_ENTRIES} entries]")
    return {
        "path": shown,
        "tree": "\n".join(lines),
        "entries": walk.shown,
        "truncated": walk.truncated,
        "ignored": walk.ignored,
        "max_depth": max_depth,
        "depth_limited": walk.depth_limited,
    }


async def list_dir(ctx: ToolContext, args: ListDirArgs) -> dict[str, Any]:
    resolved = common.resolve(ctx, args.path)
    shown = common.shown_path(ctx, resolved)
    work = functools.partial(_list_sync, resolved, args.path, shown)
    return await anyio.to_thread.run_sync(work)


async def print_dir_tree(ctx: ToolContext, args: DirTreeArgs) -> dict[str, Any]:
    resolved = common.resolve(ctx, args.path)
    shown = common.shown_path(ctx, resolved)
    work = functools.partial(_tree_sync, resolved, args.path, shown, args.max_depth)
    return await anyio.to_thread.run_sync(work)
