"""`/diff` and `/undo`: what the session's tools changed, read from the session's own record.

Contract:
- The record: the edit journal in the session's state directory (`tools.files.journal`: file
  tools' edits and the files each foreground `run_bash` changed, with before- and after-images)
  and, in the session store, one archive record per turn that changed files (`TURN_KIND`: the
  journal range it covers) and one per undone turn (`UNDO_KIND`). Both outlive the process, so
  `/undo` works after `/resume` or `yagent resume` in a new one.
- `/undo` reverts the changes of one turn (the latest not yet undone), newest first. A file is put
  back only when its present bytes are exactly what the agent's change left (`after_sha256`): a
  file the person (or a later command) changed since is left as it is, named with the reason and
  the diff from what the agent left to what it holds now. A file the turn created is removed,
  and one a command removed is restored while it is still absent, under the same rule. A change
  whose earlier bytes were not kept, and what a command's watch could not check, are named as
  not reverted. Nothing outside the workspace is touched, and a path that leads through a
  symbolic link is refused.
- `/diff` shows, per file the session changed, the unified diff from what it held before the
  session's first change of it to what it holds now; changes without a before-image are named.
Left to the host: marking where each turn begins and ends (`Turns`).
"""

from __future__ import annotations

import difflib
import os
from dataclasses import dataclass
from pathlib import Path

from yagent.memory import SessionStore
from yagent.tools.atomicfile import atomic_write
from yagent.tools.files import journal

TURN_KIND = "edit-turn"
UNDO_KIND = "edit-undo"
NOT_KEPT = "its earlier bytes were not kept (over the command watch's budget)"
NOTHING = "nothing to undo: no turn of this session changed a file, or all are undone"


@dataclass
class Turns:
    """Where the running turn began in the journal; its range goes to the store at its end."""

    _start: int = 0

    def begin(self, state_dir: Path) -> None:
        self._start = _last_seq(state_dir)

    def end(self, store: SessionStore, session_id: str, state_dir: Path) -> None:
        last = _last_seq(state_dir)
        if last > self._start:
            store.archive(session_id, kind=TURN_KIND, payload={"first": self._start, "last": last})


def open_turns(store: SessionStore, session_id: str) -> tuple[list[tuple[int, int]], int]:
    """The journal ranges (first, last] of the session's turns that changed files and are not
    undone, oldest first; and how many records could not be read (skipped, and said)."""
    bad = 0

    def spans(kind: str) -> list[tuple[int, int]]:
        nonlocal bad
        out = []
        for record in store.archived(session_id, kind):
            try:
                out.append((int(record.payload["first"]), int(record.payload["last"])))
            except (KeyError, TypeError, ValueError):
                bad += 1
        return out

    undone = set(spans(UNDO_KIND))
    return [span for span in spans(TURN_KIND) if span not in undone], bad


def _last_seq(state_dir: Path) -> int:
    edits = journal.entries(state_dir).edits
    return edits[-1].seq if edits else 0


def _target(workspace: Path, path: str) -> Path | None:
    """The file inside the workspace the journal names; None when it is not one (outside, or
    reached through a symbolic link)."""
    if os.path.isabs(path):
        return None
    target = workspace / path
    real = Path(os.path.realpath(target))
    return target if real == workspace.resolve() / path else None


def _now(target: Path) -> bytes | None:
    try:
        return target.read_bytes()
    except FileNotFoundError:
        return None


Said = tuple[str, list[str]]  # a line, and the diff lines shown under it (often none)


def undo(store: SessionStore, session_id: str, state_dir: Path, workspace: Path) -> list[Said]:
    """Revert the latest open turn's changes (see the contract); what was done, line by line."""
    spans, bad = open_turns(store, session_id)
    skipped: list[Said] = (
        [(f"{bad} unreadable turn record(s) in the session store skipped", [])] if bad else []
    )
    if not spans:
        return [(NOTHING, []), *skipped]
    first, last = spans[-1]
    read = journal.entries(state_dir)
    said = [_revert(edit, workspace) for edit in reversed(read.edits) if first < edit.seq <= last]
    store.archive(session_id, kind=UNDO_KIND, payload={"first": first, "last": last})
    if read.problem:
        said.append((f"journal: {read.problem}", []))
    return said + skipped


def _revert(edit: journal.Edit, workspace: Path) -> Said:
    by = f"{edit.tool} {edit.call_id}".strip()
    if edit.note:
        return (f"not reverted ({by}): {edit.note}", [])
    target = _target(workspace, edit.path)
    if target is None:
        return (f"left {edit.path}: outside the workspace or behind a link", [])
    if not edit.before_kept:
        return (f"not reverted {edit.path}: {by} changed it and {NOT_KEPT}", [])
    present = _now(target)
    if edit.gone:
        if present is not None:
            return (f"left {edit.path}: {by} removed it and it exists again (yours is kept)", [])
        assert edit.before is not None  # a removed file without before-image: not before_kept
        atomic_write(target, edit.before.read_bytes())
        return (f"restored {edit.path} (removed by {by})", [])
    if present is None or journal.digest(present) != edit.after_sha256:
        left = edit.after.read_bytes() if edit.after is not None else None
        shown = _unified(edit.path, left, present, "agent's", "now") if left is not None else []
        return (f"left {edit.path}: changed since the agent's edit (yours is kept)", shown)
    if edit.before is None:
        target.unlink()
        return (f"removed {edit.path} (the turn created it)", [])
    atomic_write(target, edit.before.read_bytes())
    return (f"restored {edit.path} ({edit.tool})", [])


def diff(state_dir: Path, workspace: Path) -> tuple[list[str], int, list[str]]:
    """The session's changes as unified-diff lines, how many files they cover, and the lines
    naming changes without a before-image (or not checked)."""
    read = journal.entries(state_dir)
    first: dict[str, journal.Edit] = {}
    unknown: list[str] = []
    for edit in read.edits:
        if edit.note:
            unknown.append(f"not recorded ({edit.tool} {edit.call_id}): {edit.note}")
        elif edit.path not in first:
            first[edit.path] = edit
    out: list[str] = []
    for path, edit in first.items():
        if not edit.before_kept:
            unknown.append(f"{path}: changed by {edit.tool}; {NOT_KEPT}")
            continue
        target = _target(workspace, path)
        now = _now(target) if target is not None else None
        before = edit.before.read_bytes() if edit.before is not None else None
        if before != now:
            out.extend(_unified(path, before, now, "a", "b"))
    if read.problem:
        out.append(f"journal: {read.problem}")
    return out, len(first), unknown


def _unified(path: str, old: bytes | None, new: bytes | None, left: str, right: str) -> list[str]:
    old_lines = _text(old).splitlines(keepends=True)
    new_lines = _text(new).splitlines(keepends=True)
    a = f"{left}/{path}" if old is not None else "/dev/null"
    b = f"{right}/{path}" if new is not None else "/dev/null"
    return [line.rstrip("\n") for line in difflib.unified_diff(old_lines, new_lines, a, b)]


def _text(data: bytes | None) -> str:
    return "" if data is None else data.decode("utf-8", errors="replace")
