"""files.shellwatch: what a foreground `run_bash` call changed in the workspace, for the journal.

A shell command does not say which files it wrote. Before it runs, `take` walks the workspace
(bounded) and keeps each regular file's modification time and size, and the bytes of the small
ones (the before-images); after it, `settle` walks again and journals every file whose time or
size moved, that appeared or that vanished (`files.journal.change`), so `/undo` can put it back.

Contract:
- Walked: regular files under the workspace, not following symbolic links, skipping `SKIPPED`
  directories (VCS data, dependency and cache trees) and the one the host names (its own home).
  At most `MAX_FILES` files; past that the walk stops and `settle` journals a note saying that
  changes beyond it were not checked.
- Before-images: files of at most `IMAGE_FILE` bytes, until `IMAGE_BYTES` in all are held (in
  memory, during the call). A changed file without one is journaled with `before_kept=False`:
  `/undo` names it as a change it cannot revert, never guesses.
- At most `MAX_CHANGES` files are journaled per call; the rest are counted in a note.
- A change is a moved modification time (nanoseconds) or size: a rewrite that keeps both is not
  seen. The same rule lets the next `take` of a session reuse the images of files unchanged
  since its last `settle` (the last `_SESSIONS_KEPT` sessions are remembered) instead of reading
  them again. A file the person changes while the command runs is attributed to the command (`/undo`
  still compares bytes before it reverts anything).
Leaves to the host: calling `take` before and `settle` after the command (background commands
are not watched: what they write later belongs to no call).
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from yagent.tools.files import journal
from yagent.tools.treewalk import walk

SKIPPED = frozenset(
    {".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv", ".mypy_cache"}
    | {".tox", ".pytest_cache", ".ruff_cache"}
)
MAX_FILES = 20_000
IMAGE_FILE = 256 * 1024
IMAGE_BYTES = 4 * 1024 * 1024
MAX_CHANGES = 200


@dataclass
class Snapshot:
    files: dict[str, tuple[int, int]]  # workspace-relative path -> (mtime_ns, size)
    images: dict[str, bytes] = field(default_factory=dict)
    complete: bool = True


def _walk(root: Path, skip: Path | None) -> tuple[dict[str, tuple[int, int]], bool]:
    found: dict[str, tuple[int, int]] = {}
    away = str(skip) if skip is not None else None
    for top, dirs, files in walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED and os.path.join(top, d) != away)
        for name in sorted(files):
            path = os.path.join(top, name)
            try:
                info = os.lstat(path)
            except OSError:
                continue
            if not stat.S_ISREG(info.st_mode):
                continue
            if len(found) >= MAX_FILES:
                return found, False
            found[os.path.relpath(path, root)] = (info.st_mtime_ns, info.st_size)
    return found, True


def _read(root: Path, rel: str) -> bytes | None:
    try:
        fd = os.open(root / rel, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        return handle.read()


def take(root: Path, skip: Path | None = None, *, key: str = "") -> Snapshot:
    """The workspace now; `skip`: a directory left out (yagent's own home, when inside). With a
    `key` (the session), images of files unchanged since that key's last `settle` are reused
    instead of read again."""
    files, complete = _walk(root, skip)
    last = _LAST.get(key) if key else None
    snap = Snapshot(files, complete=complete)
    held = 0
    for rel, (_, size) in files.items():
        if size > IMAGE_FILE or held + size > IMAGE_BYTES:
            continue
        known = last is not None and last.files.get(rel) == files[rel]
        data = last.images.get(rel) if known and last is not None else None
        data = data if data is not None else _read(root, rel)
        if data is not None:
            snap.images[rel] = data
            held += len(data)
    return snap


_LAST: dict[str, Snapshot] = {}  # per session: the workspace as the last settle left it
_SESSIONS_KEPT = 4


def _remember(key: str, snap: Snapshot) -> None:
    _LAST.pop(key, None)
    _LAST[key] = snap
    while len(_LAST) > _SESSIONS_KEPT:
        del _LAST[next(iter(_LAST))]


def settle(
    state_dir: Path, call_id: str, tool: str, before: Snapshot, root: Path, skip: Path | None = None
) -> int:
    """Journal what changed since `before`; how many files were journaled."""
    after, complete = _walk(root, skip)
    changed = [
        rel
        for rel in sorted(before.files.keys() | after.keys())
        if before.files.get(rel) != after.get(rel)
    ]
    moved = set(changed)
    images = {rel: data for rel, data in before.images.items() if rel not in moved}
    for rel in changed[:MAX_CHANGES]:
        was = before.images.get(rel)
        kept = rel not in before.files or was is not None
        now = _read(root, rel) if rel in after else None
        if now is not None and len(now) <= IMAGE_FILE:
            images[rel] = now
        if was is not None and now == was:
            continue  # touched, the same bytes
        journal.change(state_dir, call_id, tool, rel, was, now, before_kept=kept)
    _remember(str(state_dir), Snapshot(after, images, complete))
    if len(changed) > MAX_CHANGES:
        left = len(changed) - MAX_CHANGES
        journal.note(state_dir, call_id, tool, f"{left} more changed file(s) not recorded")
    if not (before.complete and complete):
        journal.note(
            state_dir,
            call_id,
            tool,
            f"the workspace has over {MAX_FILES} files: changes past them were not checked",
        )
    return min(len(changed), MAX_CHANGES)
