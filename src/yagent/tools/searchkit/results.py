"""searchkit.results: what both search engines produce, and how it is shown to the model.

Contract:
- Engines fill one `Tally`: every matching line is counted, the first `max_results` are kept.
  Counting stops at `count_limit` lines; past that the total is unknown and the result says
  `more: true` instead of a number. Nothing is dropped without a field saying so.
- `shape()` gives the tool result: paths relative to the workspace (absolute outside it),
  1-based line and column, the line text clipped to `max_line_chars` around the first match with
  visible `[… N chars]` markers, submatch character spans (at most `max_submatches`, the rest
  counted), `truncated` / `total_matches` / `more` / `timed_out` / `errors` / `note`.
- Files the read rules hide (`Query.hidden`: `[sandbox] deny_read`, credential stores…) are not
  searched by either engine; `hidden_files` and a note say how many were left out.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class Query:
    """One search, as both engines read it. `root` and `workspace` are real absolute paths."""

    pattern: str
    root: str
    workspace: str
    glob: str | None = None
    fixed_strings: bool = False
    ignore_case: bool = False
    hidden: Callable[[str], bool] | None = field(default=None, compare=False)  # read rules


@dataclass(slots=True)
class Hit:
    path: str  # absolute
    line: int
    text: str  # without the line terminator (of a long line: the window the match is in)
    spans: list[tuple[int, int]]  # character offsets in `text`
    skipped: int = 0  # characters of the line before `text` (a long line's window)


@dataclass(slots=True)
class Tally:
    max_results: int
    count_limit: int
    hits: list[Hit] = field(default_factory=list)
    total: int = 0
    complete: bool = True  # False when counting stopped at count_limit
    timed_out: bool = False
    errors: list[str] = field(default_factory=list)
    hidden_files: int = 0  # files the read rules hid: never searched, said in a note
    long_lines: list[str] = field(default_factory=list)  # "path:line" searched in windows

    def count(self) -> bool:
        """Count one matching line; True when it is to be kept (fewer than max_results kept).

        A line past `count_limit` is not counted: it only proves the total is now unknown.
        """
        if self.total >= self.count_limit:
            self.complete = False
            return False
        self.total += 1
        return self.total <= self.max_results

    @property
    def full(self) -> bool:
        """No further line will change the result."""
        return not self.complete


@dataclass(frozen=True, slots=True)
class Shown:
    workspace: str
    max_line_chars: int
    max_submatches: int


def display_path(path: str, workspace: str) -> str:
    """Relative to the workspace (absolute outside it); undecodable name bytes become U+FFFD."""
    rel = os.path.relpath(path, workspace)
    shown = path if rel == ".." or rel.startswith("../") else rel
    return shown.encode("utf-8", errors="surrogateescape").decode("utf-8", errors="replace")


def clip(text: str, first: int, limit: int) -> str:
    """At most `limit` characters of `text`, a window holding `first` when it lies further on."""
    if len(text) <= limit:
        return text
    start = 0
    if first > limit - limit // 3:
        start = min(first - limit // 3, len(text) - limit)
    end = start + limit
    head = f"[… {start} chars] " if start else ""
    tail = f" [… {len(text) - end} more chars]" if end < len(text) else ""
    return head + text[start:end] + tail


def _match_row(hit: Hit, shown: Shown) -> dict[str, Any]:
    first = hit.spans[0][0] if hit.spans else 0
    text = clip(hit.text, first, shown.max_line_chars)
    row: dict[str, Any] = {
        "path": display_path(hit.path, shown.workspace),
        "line": hit.line,
        "column": hit.skipped + first + 1,
        "text": f"[… {hit.skipped} chars] {text}" if hit.skipped else text,
        "submatches": [[s + hit.skipped, e + hit.skipped] for s, e in hit.spans],
    }
    row["submatches"] = row["submatches"][: shown.max_submatches]
    if len(hit.spans) > shown.max_submatches:
        row["more_submatches"] = len(hit.spans) - shown.max_submatches
    return row


def shape(
    tally: Tally, shown: Shown, *, engine: str, pattern: str, root: str, notes: list[str]
) -> dict[str, Any]:
    rows = [_match_row(hit, shown) for hit in tally.hits]
    truncated = len(rows) < tally.total or not tally.complete or tally.timed_out
    result: dict[str, Any] = {
        "engine": engine,
        "pattern": pattern,
        "path": display_path(root, shown.workspace),
        "matches": rows,
        "returned": len(rows),
        "total_matches": tally.total if tally.complete and not tally.timed_out else None,
        "truncated": truncated,
    }
    notes = list(notes)
    if not tally.complete:
        result["more"] = True
        notes.append(
            f"counting stopped at {tally.total} matching lines; showing the first {len(rows)}"
        )
    elif len(rows) < tally.total:
        notes.append(
            f"showing the first {len(rows)} of {tally.total} matching lines; narrow the "
            "pattern, path or glob to see others"
        )
    if tally.hidden_files:
        result["hidden_files"] = tally.hidden_files
        notes.append(
            f"{tally.hidden_files} file(s) hidden from every tool ([sandbox] deny_read, "
            "credential stores, yagent's state) were not searched"
        )
    if tally.timed_out:
        result["timed_out"] = True
        notes.append(f"the search timed out after {tally.total} matching lines; it is incomplete")
    if tally.long_lines:
        result["long_lines"] = [display_path(p, shown.workspace) for p in tally.long_lines[:20]]
        notes.append(
            f"{len(tally.long_lines)} line(s) too long to hold were searched in windows: only "
            "the first match of each is shown, and a match straddling two windows that is "
            "longer than their overlap could be missed there"
        )
    if tally.errors:
        result["errors"] = tally.errors[:20]
        if len(tally.errors) > 20:
            result["errors_total"] = len(tally.errors)
    if notes:
        result["note"] = " ".join(notes)
    return result
