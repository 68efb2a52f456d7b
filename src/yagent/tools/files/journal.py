"""files.journal: the session's own record of what its tools changed, for `/diff` and `/undo`.

Contract:
- Every successful `write_file` / `search_replace_in_file` of a session with a state directory
  appends one line to `<state_dir>/edits/journal.jsonl`: the call id, the file (workspace-relative
  when inside the workspace), a copy of the bytes it held before (`<n>.before`, or none: the file
  was created), a copy of the bytes the tool left (`<n>.after`) and their SHA-256. The copies are
  written before the line, so a line always names copies that exist.
- A `run_bash` call records, the same way, each workspace file it changed, created or removed
  (`tools.files.shellwatch` finds them): `before_kept` is False when no before-image was taken
  (the file was over the watch's byte budget), `gone` when the command removed the file; and a
  `note` line (no path) for what could not be checked (a workspace over the watch's bound, a
  background command).
- `entries(state_dir)` reads the journal back in order; a line that cannot be read ends the
  reading there and is reported in `Journal.problem` (never skipped silently). Lines written
  before `after` copies existed read with `after=None`.
- Nothing here decides whether an undo is safe: the host compares `after_sha256` with the file's
  present bytes, so a change the person made since is never overwritten.
- Left out: sessions without a state directory (tests of bare tools).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from yagent.tools.adapter import ToolContext

FOLDER = "edits"
JOURNAL = "journal.jsonl"
GONE = ""  # after_sha256 of a file the change removed


@dataclass(frozen=True, slots=True)
class Edit:
    seq: int
    call_id: str
    tool: str
    path: str
    before: Path | None  # the copy of the earlier bytes; None: created (or not kept)
    after_sha256: str  # GONE: the change removed the file
    after: Path | None = None  # the copy of the bytes left; None: gone or an older line
    before_kept: bool = True  # False: the file existed, its earlier bytes were not kept
    note: str = ""  # a line about what could not be recorded (no path)

    @property
    def gone(self) -> bool:
        return self.after_sha256 == GONE and not self.note


@dataclass(frozen=True, slots=True)
class Journal:
    edits: tuple[Edit, ...]
    problem: str | None = None


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def record(ctx: ToolContext, tool: str, path: str, before: bytes | None, after: bytes) -> None:
    """One edit of `path` by `tool`, appended to the session's journal (see the contract)."""
    if ctx.state_dir is not None:
        change(ctx.state_dir, ctx.call.call_id, tool, path, before, after)


def change(
    state_dir: Path,
    call_id: str,
    tool: str,
    path: str,
    before: bytes | None,
    after: bytes | None,
    *,
    before_kept: bool = True,
) -> None:
    """One changed file: `before` None = it did not exist (or, with `before_kept` False, its
    bytes were not kept); `after` None = the change removed it."""
    folder, seq = _next(state_dir)
    line = {"seq": seq, "call_id": call_id, "tool": tool, "path": path, "before": None}
    if before is not None:
        line["before"] = f"{seq}.before"
        (folder / f"{seq}.before").write_bytes(before)
    if after is not None:
        line["after"] = f"{seq}.after"
        (folder / f"{seq}.after").write_bytes(after)
    line["after_sha256"] = digest(after) if after is not None else GONE
    if not before_kept:
        line["before_kept"] = False
    _append(folder, line)


def note(state_dir: Path, call_id: str, tool: str, text: str) -> None:
    """A line saying what a call changed that could not be recorded."""
    folder, seq = _next(state_dir)
    line = {"seq": seq, "call_id": call_id, "tool": tool, "path": "", "before": None}
    _append(folder, {**line, "after_sha256": GONE, "note": text})


def _next(state_dir: Path) -> tuple[Path, int]:
    folder = state_dir / FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    journal = folder / JOURNAL
    return folder, (sum(1 for _ in journal.open("rb")) + 1 if journal.exists() else 1)


def _append(folder: Path, line: dict[str, object]) -> None:
    with (folder / JOURNAL).open("a", encoding="utf-8") as out:
        out.write(json.dumps(line, ensure_ascii=False) + "\n")


def entries(state_dir: Path) -> Journal:
    folder = state_dir / FOLDER
    journal = folder / JOURNAL
    if not journal.exists():
        return Journal(())
    found: list[Edit] = []
    for number, raw in enumerate(journal.read_text(encoding="utf-8").splitlines(), 1):
        try:
            line = json.loads(raw)
            before, after = line["before"], line.get("after")
            found.append(
                Edit(
                    int(line["seq"]),
                    str(line["call_id"]),
                    str(line["tool"]),
                    str(line["path"]),
                    folder / before if before else None,
                    str(line["after_sha256"]),
                    folder / after if after else None,
                    bool(line.get("before_kept", True)),
                    str(line.get("note", "")),
                )
            )
        except (ValueError, KeyError, TypeError) as exc:
            return Journal(tuple(found), f"{journal} line {number} unreadable ({exc}); read to it")
    return Journal(tuple(found))
