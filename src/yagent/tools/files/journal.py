"""files.journal: the session's own record of what its file tools changed, for `/diff` and `/undo`.

Contract:
- Every successful `write_file` / `search_replace_in_file` of a session with a state directory
  appends one line to `<state_dir>/edits/journal.jsonl`: the call id, the file (workspace-relative
  when inside the workspace), a copy of the bytes it held before (`<n>.before`, or none: the file
  was created) and the SHA-256 of the bytes the tool left. The copy is written before the line, so
  a line always names a copy that exists.
- `entries(state_dir)` reads the journal back in order; a line that cannot be read ends the
  reading there and is reported in `Journal.problem` (never skipped silently).
- Nothing here decides whether an undo is safe: the host compares `after_sha256` with the file's
  present bytes, so a change the person made since is never overwritten.
- Left out: what shell commands change (not journaled; `/undo` says so), and sessions without a
  state directory (tests of bare tools).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from yagent.tools.adapter import ToolContext

FOLDER = "edits"
JOURNAL = "journal.jsonl"


@dataclass(frozen=True, slots=True)
class Edit:
    seq: int
    call_id: str
    tool: str
    path: str
    before: Path | None  # the copy of the earlier bytes; None: the tool created the file
    after_sha256: str


@dataclass(frozen=True, slots=True)
class Journal:
    edits: tuple[Edit, ...]
    problem: str | None = None


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def record(ctx: ToolContext, tool: str, path: str, before: bytes | None, after: bytes) -> None:
    """One edit of `path` by `tool`, appended to the session's journal (see the contract)."""
    if ctx.state_dir is None:
        return
    folder = ctx.state_dir / FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    journal = folder / JOURNAL
    seq = sum(1 for _ in journal.open("rb")) + 1 if journal.exists() else 1
    copy = None
    if before is not None:
        copy = f"{seq}.before"
        (folder / copy).write_bytes(before)
    line = {
        "seq": seq,
        "call_id": ctx.call.call_id,
        "tool": tool,
        "path": path,
        "before": copy,
        "after_sha256": digest(after),
    }
    with journal.open("a", encoding="utf-8") as out:
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
            before = line["before"]
            found.append(
                Edit(
                    int(line["seq"]),
                    str(line["call_id"]),
                    str(line["tool"]),
                    str(line["path"]),
                    folder / before if before else None,
                    str(line["after_sha256"]),
                )
            )
        except (ValueError, KeyError, TypeError) as exc:
            return Journal(tuple(found), f"{journal} line {number} unreadable ({exc}); read to it")
    return Journal(tuple(found))
