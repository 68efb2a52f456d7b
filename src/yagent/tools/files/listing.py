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
- What the read rules hide (the guard's `ReadMask`: `[sandbox] deny_read`, credential stores,
  yagent's state) is named but never opened, as the sandbox shows it (an empty folder): the tree
  marks such an entry `[hidden]` and does not expand it, `list_dir` names it in `hidden`; both
  say so in a note.
- Both list the directory the ring judged, through descriptors (`files.judged`): the root is
  opened beneath the judged resolution without following links, each subdirectory is opened
  from its parent's descriptor with `O_NOFOLLOW`, and every `.gitignore` is read from the
  directory's descriptor. A directory that became a symbolic link after it was listed is shown,
  not expanded; a root that changed after the check is a CONFLICT failure.
- Names that are not valid UTF-8 are listed with each undecodable byte as `\\xNN`
  (`common.name_text`); the same spelling given back to a file tool opens that file.
- Refused: a missing path (NOT_FOUND), a path that is not a directory (INVALID_ARGS).
Both walk the disk in a worker thread (`anyio.to_thread`): trees can be large.
"""

from __future__ import annotations

import contextlib
import functools
import heapq
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio.to_thread

from yagent.kernel.confine.beneath import SymlinkMetError
from yagent.kernel.judge.toolfail import Kind, ToolFailure
from yagent.tools.adapter import ToolContext
from yagent.tools.files import common, ignore, judged
from yagent.tools.files.judged import Judged
from yagent.toolspec.params import DirTreeArgs, ListDirArgs

MAX_LIST_ENTRIES = 1000
MAX_TREE_ENTRIES = 500
_SUBDIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


@contextlib.contextmanager
def _open_root(target: Judged, given: str) -> Iterator[int]:
    try:
        fd = judged.open_fd(target, os.O_RDONLY | os.O_DIRECTORY)
    except FileNotFoundError:
        raise ToolFailure(Kind.NOT_FOUND, f"{given}: no such directory") from None
    except NotADirectoryError:
        raise common.not_a_directory(given) from None
    except SymlinkMetError as exc:
        raise judged.changed(given, exc, "nothing was listed") from None
    try:
        yield fd
    finally:
        os.close(fd)


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


Hidden = Callable[[str], bool]
HIDDEN_NOTE = (
    "entries marked hidden are hidden from every tool ([sandbox] deny_read, credential stores, "
    "yagent's state): they are not opened"
)


def _list_sync(target: Judged, given: str, shown: str, hidden: Hidden) -> dict[str, Any]:
    total = 0
    masked: list[str] = []

    def names(fd: int) -> Iterator[str]:
        nonlocal total
        with os.scandir(fd) as it:
            for entry in it:
                total += 1
                name = common.name_text(entry.name) + ("/" if _is_dir(entry) else "")
                if hidden(os.path.join(target.resolved, entry.name)):
                    masked.append(name)
                yield name

    with _open_root(target, given) as fd:
        # nsmallest keeps memory bounded by the cap, whatever the directory holds.
        entries = heapq.nsmallest(MAX_LIST_ENTRIES, names(fd), key=lambda n: n.rstrip("/"))
    result: dict[str, Any] = {
        "path": shown,
        "entries": entries,
        "count": len(entries),
        "total": total,
        "truncated": total > len(entries),
    }
    notes = []
    if result["truncated"]:
        notes.append(
            f"showing the first {len(entries)} of {total} entries by name (cap "
            f"{MAX_LIST_ENTRIES}); list a subdirectory or use search to narrow down"
        )
    if masked:
        result["hidden"] = sorted(masked)
        notes.append(HIDDEN_NOTE)
    if notes:
        result["note"] = "; ".join(notes)
    return result


@dataclass(slots=True)
class _Walk:
    max_depth: int
    hidden: Hidden
    masked: int = 0
    lines: list[str] = field(default_factory=list)
    shown: int = 0
    ignored: int = 0
    depth_limited: bool = False
    truncated: bool = False


def _entries(fd: int) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(fd) as it:
            return sorted(it, key=lambda e: e.name)
    except OSError:
        return []  # unreadable directories are shown, just not expanded


def _subdir(walk: _Walk, fd: int, path: Path, depth: int, levels: list[ignore.Level]) -> None:
    try:
        sub = os.open(path.name, _SUBDIR_FLAGS, dir_fd=fd)
    except OSError:
        return  # gone, unreadable or turned into a link since it was listed: not expanded
    try:
        _walk(walk, sub, path, depth, levels)
    finally:
        os.close(sub)


def _walk(walk: _Walk, fd: int, directory: Path, depth: int, levels: list[ignore.Level]) -> None:
    level = ignore.load(directory, fd)
    if level is not None:
        levels = [*levels, level]
    indent = "  " * depth
    for entry in _entries(fd):
        path = directory / entry.name
        is_link = entry.is_symlink()
        is_dir = not is_link and _is_dir(entry)
        if ignore.is_ignored(levels, path, is_dir):
            walk.ignored += 1
            continue
        if walk.shown >= MAX_TREE_ENTRIES:
            walk.truncated = True
            return
        walk.shown += 1
        if walk.hidden(str(path)):
            walk.masked += 1
            mark = "/" if is_dir else ""
            walk.lines.append(f"{indent}{common.name_text(entry.name)}{mark} [hidden]")
        elif is_link:
            target = common.name_text(_readlink(fd, entry.name))
            walk.lines.append(f"{indent}{common.name_text(entry.name)} -> {target}")
        elif is_dir:
            walk.lines.append(f"{indent}{common.name_text(entry.name)}/")
            if depth + 1 < walk.max_depth:
                _subdir(walk, fd, path, depth + 1, levels)
                if walk.truncated:
                    return
            else:
                walk.depth_limited = True
        else:
            walk.lines.append(f"{indent}{common.name_text(entry.name)}")


def _readlink(fd: int, name: str) -> str:
    try:
        return os.readlink(name, dir_fd=fd)
    except OSError:
        return "(changed while listed)"


def _tree_sync(
    target: Judged, given: str, shown: str, max_depth: int, hidden: Hidden
) -> dict[str, Any]:
    walk = _Walk(max_depth, hidden)
    with _open_root(target, given) as fd:
        _walk(walk, fd, target.resolved, 0, ignore.ancestor_levels(target.resolved))
    header = "./" if shown == "." else shown.rstrip("/") + "/"
    lines = [header] + ["  " + line for line in walk.lines]
    if walk.truncated:
        lines.append(f"… [truncated: showing the first {MAX_TREE_ENTRIES} entries]")
    result: dict[str, Any] = {
        "path": shown,
        "tree": "\n".join(lines),
        "entries": walk.shown,
        "truncated": walk.truncated,
        "ignored": walk.ignored,
        "max_depth": max_depth,
        "depth_limited": walk.depth_limited,
    }
    if walk.masked:
        result["hidden"] = walk.masked
        result["note"] = HIDDEN_NOTE
    return result


def _hidden(ctx: ToolContext) -> Hidden:
    reads = ctx.surface.guard.reads
    return lambda path: reads.denies(path) is not None


async def list_dir(ctx: ToolContext, args: ListDirArgs) -> dict[str, Any]:
    target = common.resolve(ctx, args.path)
    shown = common.shown_path(ctx, target.resolved)
    work = functools.partial(_list_sync, target, args.path, shown, _hidden(ctx))
    return await anyio.to_thread.run_sync(work)


async def print_dir_tree(ctx: ToolContext, args: DirTreeArgs) -> dict[str, Any]:
    target = common.resolve(ctx, args.path)
    shown = common.shown_path(ctx, target.resolved)
    work = functools.partial(_tree_sync, target, args.path, shown, args.max_depth, _hidden(ctx))
    return await anyio.to_thread.run_sync(work)
