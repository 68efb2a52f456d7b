"""codegraph.tools: the `find_definitions` and `find_references` executors.

Contract:
- Walk the path with the same walk as `search` (ignore files, hidden files, no `.git`, no
  symlinks, sorted); parse Python, JavaScript/TypeScript and Go files with tree-sitter. Files of
  other languages are not parsed and are counted in `other_files` (by extension), never hidden.
- A file over `MAX_FILE_BYTES` is not parsed and is listed in `skipped` with its size; a file
  that cannot be read is listed there with the reason. Files with syntax errors are parsed as far
  as tree-sitter recovers and listed in `syntax_errors`.
- Results come in walk order, then by position; at most `MAX_DEFINITIONS` / `MAX_REFERENCES`
  are returned, `total` counts all, `truncated` says when anything is left out.
- `symbol` is an identifier, optionally qualified (`Outer.Inner.method`): the qualifier narrows
  definitions to that container; references are matched by the last name only (the note says so).
- Files are read as the judged path's descendants (`files.judged`): each is opened beneath the
  resolution the ring judged, no symbolic link followed on the way (non-blocking, checked with
  `fstat`). A file whose path changed after the check — a directory swapped for a link — is not
  read; it is listed in `skipped` saying so, and none of its content is returned.
- `CODEGRAPH_TIMEOUT` bounds the walk; a partial result says `timed_out: true`. On cancellation
  the worker thread is told to stop.
Refuses: an empty or non-identifier symbol (INVALID_ARGS); a missing path (`FileNotFoundError`).
"""

from __future__ import annotations

import os
import re
import stat
import threading
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from functools import partial
from typing import Any, Literal

import anyio
import anyio.to_thread

from yagent.kernel.confine import beneath
from yagent.kernel.judge.toolfail import Kind, ToolFailure
from yagent.tools.adapter import ToolContext
from yagent.tools.codegraph.languages import extension_label, language_for
from yagent.tools.codegraph.scan import scan
from yagent.tools.files import judged
from yagent.tools.files.judged import Judged
from yagent.tools.ignorewalk import IgnoreTree, walk_files
from yagent.tools.searchkit.results import display_path
from yagent.toolspec.params import SymbolArgs

# Test seams (module-level so tests can lower them).
CODEGRAPH_TIMEOUT = 60.0
MAX_FILE_BYTES = 1_000_000
MAX_DEFINITIONS = 100
MAX_REFERENCES = 300
MAX_LISTED = 50

_NAME = r"(?:#?[^\W\d]|\$)[\w$]*"  # identifiers of the four languages, JS `$x` and `#private`
_SYMBOL = re.compile(rf"{_NAME}(?:\.{_NAME})*")
_READ_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY

Want = Literal["definitions", "references"]


@dataclass(slots=True)
class _Survey:
    root: Judged
    workspace: str
    name: str
    qualifier: str | None
    want: Want
    limit: int
    stop: threading.Event
    deadline: float
    matches: list[dict[str, Any]] = field(default_factory=list)
    total: int = 0
    scanned: Counter[str] = field(default_factory=Counter)
    other: Counter[str] = field(default_factory=Counter)
    skipped: list[dict[str, Any]] = field(default_factory=list)
    syntax_errors: list[str] = field(default_factory=list)
    timed_out: bool = False
    errors: list[str] = field(default_factory=list)
    anchor_fd: int = -1  # the judged root's anchor, open while the worker walks

    def over(self) -> bool:
        if self.stop.is_set():
            return True
        if time.monotonic() >= self.deadline:
            self.timed_out = True
            return True
        return False

    def add(self, row: dict[str, Any]) -> None:
        self.total += 1
        if len(self.matches) < self.limit:
            self.matches.append(row)

    def read(self, path: str, shown: str) -> bytes | None:
        rel = os.path.relpath(path, self.root.resolved)
        parts = (*self.root.parts, *(p for p in rel.split("/") if p != "."))
        try:
            fd = beneath.open_beneath(self.anchor_fd, parts, _READ_FLAGS)
        except beneath.SymlinkMetError:
            reason = "changed after the check (a symbolic link on its way); not read"
            self.skipped.append({"path": shown, "reason": reason})
            return None
        except OSError as exc:
            self.skipped.append({"path": shown, "reason": f"unreadable: {exc.strerror or exc}"})
            return None
        with open(fd, "rb") as fh:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                self.skipped.append({"path": shown, "reason": "not a regular file"})
                return None
            if st.st_size > MAX_FILE_BYTES:
                self.skipped.append(
                    {
                        "path": shown,
                        "reason": f"larger than {MAX_FILE_BYTES} bytes",
                        "bytes": st.st_size,
                    }
                )
                return None
            return fh.read(MAX_FILE_BYTES + 1)

    def visit(self, path: str) -> None:
        lang = language_for(path)
        if lang is None:
            self.other[extension_label(path)] += 1
            return
        shown = display_path(path, self.workspace)
        data = self.read(path, shown)
        if data is None:
            return
        self.scanned[lang.name] += 1
        if self.name.encode("utf-8") not in data:
            return  # cheap pre-check: most files never spell the name
        found = scan(lang, data, self.name)
        if found.has_error:
            self.syntax_errors.append(shown)
        base = {"path": shown}
        if self.want == "definitions":
            for d in found.definitions:
                if self.qualifier is None or _contained(d.container, self.qualifier):
                    self.add({**base, **asdict(d), "language": lang.name})
        else:
            for r in found.references:
                self.add({**base, **asdict(r)})


def _contained(container: str | None, qualifier: str) -> bool:
    return container is not None and (container == qualifier or container.endswith("." + qualifier))


def _survey(root: str, survey: _Survey) -> None:
    tree = IgnoreTree(root) if os.path.isdir(root) else None
    with judged.anchor(survey.root) as survey.anchor_fd:
        for path in walk_files(root, tree=tree, stop=survey.over, errors=survey.errors):
            survey.visit(path)
            if survey.over():
                break
    if tree is not None:
        survey.errors += tree.problems


def _result(symbol: str, root: str, s: _Survey) -> dict[str, Any]:
    truncated = s.total > len(s.matches) or s.timed_out
    result: dict[str, Any] = {
        "symbol": symbol,
        "path": display_path(root, s.workspace),
        "matches": s.matches,
        "returned": len(s.matches),
        "total": s.total,
        "truncated": truncated,
        "files_parsed_by_language": dict(s.scanned),
    }
    notes: list[str] = []
    if s.total > len(s.matches):
        notes.append(f"showing the first {len(s.matches)} of {s.total} {s.want}")
    if s.timed_out:
        result["timed_out"] = True
        notes.append(f"stopped after {CODEGRAPH_TIMEOUT:g}s; the walk is incomplete")
    if s.other:
        result["other_files"] = {
            "count": sum(s.other.values()),
            "by_extension": dict(s.other.most_common(15)),
        }
        notes.append("files in other languages were not parsed (Python, JS/TS and Go only)")
    if s.skipped:
        result["skipped"] = s.skipped[:MAX_LISTED]
        result["skipped_total"] = len(s.skipped)
        notes.append(f"{len(s.skipped)} file(s) were not parsed (see skipped)")
    if s.syntax_errors:
        result["syntax_errors"] = s.syntax_errors[:MAX_LISTED]
        notes.append("files in syntax_errors may have incomplete results")
    if s.errors:
        result["errors"] = s.errors[:MAX_LISTED]
    if s.want == "references" and s.qualifier is not None:
        notes.append(f"references are matched by the name {s.name!r} only")
    if notes:
        result["note"] = "; ".join(notes)
    return result


def _prepare(ctx: ToolContext, args: SymbolArgs, want: Want, limit: int) -> tuple[str, _Survey]:
    symbol = args.symbol.strip()
    if not _SYMBOL.fullmatch(symbol):
        raise ToolFailure(
            Kind.INVALID_ARGS,
            f"symbol {args.symbol!r} is not an identifier (optionally qualified, like A.method)",
        )
    qualifier, _, name = symbol.rpartition(".")
    root = ctx.surface.guard.resolve(args.path)
    if not os.path.exists(root):
        raise FileNotFoundError(f"no such file or directory: {args.path}")
    survey = _Survey(
        Judged.of(ctx.surface.guard.workspace, root),
        os.path.realpath(ctx.workspace),
        name,
        qualifier or None,
        want,
        limit,
        threading.Event(),
        time.monotonic() + CODEGRAPH_TIMEOUT,
    )
    return root, survey


async def _run(ctx: ToolContext, args: SymbolArgs, want: Want, limit: int) -> dict[str, Any]:
    root, survey = _prepare(ctx, args, want, limit)
    try:
        await anyio.to_thread.run_sync(partial(_survey, root, survey), abandon_on_cancel=True)
    finally:
        survey.stop.set()  # a cancelled call's worker thread stops at its next file
    return _result(args.symbol.strip(), root, survey)


async def find_definitions(ctx: ToolContext, args: SymbolArgs) -> dict[str, Any]:
    return await _run(ctx, args, "definitions", MAX_DEFINITIONS)


async def find_references(ctx: ToolContext, args: SymbolArgs) -> dict[str, Any]:
    return await _run(ctx, args, "references", MAX_REFERENCES)
