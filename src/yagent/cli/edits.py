"""`/diff` and `/undo`: what the session's file tools changed, read from its own edit journal.

Contract:
- `/undo` reverts the edits of one turn (the latest not yet undone), newest first. A file is put
  back only when its present bytes are exactly what the agent's edit left (`after_sha256`): a
  file the person (or a later command) changed since is left as it is and named. A file the
  turn created is removed under the same condition. Nothing outside the workspace is touched,
  and a path that leads through a symbolic link is refused.
- `/diff` shows, per file the session's tools edited, the unified diff from what it held before
  the session's first edit of it to what it holds now (a removed or never-created file included).
- What shell commands changed is not in the journal: both commands say so.
Left to the host: which turns there were (`Turns` marks the journal's length around each).
"""

from __future__ import annotations

import difflib
import os
from dataclasses import dataclass, field
from pathlib import Path

from yagent.tools.atomicfile import atomic_write
from yagent.tools.files import journal

NOT_SHELL = "(edits made by shell commands are not recorded and not reverted)"


@dataclass
class Turns:
    """The journal ranges (first seq, last seq] of the turns that edited files, oldest first."""

    spans: list[tuple[int, int]] = field(default_factory=list)
    _start: int = 0

    def begin(self, state_dir: Path) -> None:
        self._start = _last_seq(state_dir)

    def end(self, state_dir: Path) -> None:
        last = _last_seq(state_dir)
        if last > self._start:
            self.spans.append((self._start, last))


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


def undo(turns: Turns, state_dir: Path, workspace: Path) -> list[str]:
    """Revert the latest turn's edits (see the contract); the lines saying what was done."""
    if not turns.spans:
        return ["nothing to undo: no turn of this session edited a file with its file tools"]
    first, last = turns.spans.pop()
    read = journal.entries(state_dir)
    lines: list[str] = []
    for edit in reversed([e for e in read.edits if first < e.seq <= last]):
        target = _target(workspace, edit.path)
        if target is None:
            lines.append(f"left {edit.path}: outside the workspace or behind a link")
            continue
        present = _now(target)
        if present is None or journal.digest(present) != edit.after_sha256:
            lines.append(f"left {edit.path}: changed since the agent's edit (yours is kept)")
            continue
        if edit.before is None:
            target.unlink()
            lines.append(f"removed {edit.path} (the turn created it)")
        else:
            atomic_write(target, edit.before.read_bytes())
            lines.append(f"restored {edit.path} ({edit.tool})")
    if read.problem:
        lines.append(f"journal: {read.problem}")
    return [*lines, NOT_SHELL]


def diff(state_dir: Path, workspace: Path) -> tuple[list[str], int]:
    """The session's changes as unified-diff lines, and how many files they cover."""
    read = journal.entries(state_dir)
    first: dict[str, Path | None] = {}
    for edit in read.edits:
        first.setdefault(edit.path, edit.before)
    out: list[str] = []
    for path, before_copy in first.items():
        target = _target(workspace, path)
        now = _now(target) if target is not None else None
        before = before_copy.read_bytes() if before_copy is not None else None
        if before == now:
            continue
        old = _text(before).splitlines(keepends=True)
        new = _text(now).splitlines(keepends=True)
        left = f"a/{path}" if before is not None else "/dev/null"
        right = f"b/{path}" if now is not None else "/dev/null"
        out.extend(line.rstrip("\n") for line in difflib.unified_diff(old, new, left, right))
    if read.problem:
        out.append(f"journal: {read.problem}")
    return out, len(first)


def _text(data: bytes | None) -> str:
    return "" if data is None else data.decode("utf-8", errors="replace")
