"""search: the content-search executor.

Contract:
- Engine order: the `rg` the `ripgrep` wheel installs, then `rg` on PATH, then a pure-Python
  fallback. The result names its engine (`"engine": "ripgrep"` with `engine_source`, or
  `"python-fallback"` with a note saying it is the fallback and why). An rg that cannot be
  started is reported in the note and the fallback runs.
- Both engines walk the same files in the same order with the same rules: `.gitignore` (inside a
  git repository) / `.ignore` / `.rgignore` honoured, hidden files searched, `.git/` and symlinks
  skipped, binary files skipped; a `glob` narrows the files and never brings back ignored ones.
  Globs with a `/` are relative to the workspace. Files hidden from every tool (the guard's
  `ReadMask`: `[sandbox] deny_read`, credential stores, yagent's state) are not searched; the
  result counts them (`hidden_files`, a note).
- Results: at most `max_results` matching lines, sorted by path then line; `total_matches` when
  counted to the end (up to `COUNT_LIMIT`), else `more: true`; `truncated: true` whenever
  anything is left out; long lines clipped to `MAX_LINE_CHARS` with visible markers. Paths are
  relative to the workspace (absolute outside it).
- Refusals: a pattern with a line break, a glob or regex the engine refuses → `ToolFailure`
  (INVALID_ARGS) naming the problem; a missing path → `FileNotFoundError`; a path that is neither
  a regular file nor a directory (a FIFO, a device) → `ToolFailure` (INVALID_ARGS), at once.
- `SEARCH_TIMEOUT` bounds every search: rg is killed, the fallback stops, and the (partial)
  result says `timed_out: true`. On cancellation rg is killed and the fallback told to stop.
"""

from __future__ import annotations

import os
import stat
import threading
from functools import partial
from typing import Any

import anyio
import anyio.to_thread

from yagent.kernel.judge.toolfail import Kind, ToolFailure
from yagent.tools.adapter import ToolContext
from yagent.tools.ignorewalk import Filter, GlobError, IgnoreTree, Visibility
from yagent.tools.searchkit.fallback import fallback_search
from yagent.tools.searchkit.locate import Rg, locate_rg
from yagent.tools.searchkit.results import Query, Shown, Tally, shape
from yagent.tools.searchkit.rg import run_rg
from yagent.toolspec.params import SearchArgs

# Test seams (module-level so tests can lower them).
SEARCH_TIMEOUT = 30.0
COUNT_LIMIT = 100_000
MAX_LINE_CHARS = 300
MAX_SUBMATCHES = 10

FALLBACK_NOTE = (
    "ripgrep (rg) is not available — {why}; this result comes from the slower pure-Python "
    "fallback engine (regex syntax: Python's re)."
)


def find_rg() -> Rg | None:
    """The engine lookup; a seam so tests can take rg away."""
    return locate_rg()


def _filter(glob: str | None, workspace: str) -> Filter | None:
    if not glob:
        return None
    try:
        return Filter([glob], workspace)
    except GlobError as exc:
        raise ToolFailure(Kind.INVALID_ARGS, f"invalid glob {glob!r}: {exc}") from exc


async def _fallback(query: Query, tally: Tally, keep: Filter | None) -> None:
    stop = threading.Event()
    job = partial(fallback_search, query, tally, keep=keep, timeout=SEARCH_TIMEOUT, stop=stop)
    try:
        await anyio.to_thread.run_sync(job, abandon_on_cancel=True)
    finally:
        stop.set()  # a cancelled call's worker thread stops at its next file or block


def _prepare(ctx: ToolContext, args: SearchArgs) -> tuple[Query, Filter | None]:
    if "\n" in args.pattern or "\r" in args.pattern:
        raise ToolFailure(
            Kind.INVALID_ARGS,
            "the pattern contains a line break; search matches within single lines",
        )
    root = ctx.surface.guard.resolve(args.path)
    try:
        mode = os.stat(root).st_mode
    except FileNotFoundError:
        raise FileNotFoundError(f"no such file or directory: {args.path}") from None
    if not stat.S_ISDIR(mode) and not stat.S_ISREG(mode):
        # a FIFO waits for a writer, a device never ends: nothing to search, refused at once
        raise ToolFailure(Kind.INVALID_ARGS, f"{args.path} is not a regular file or a directory")
    workspace = os.path.realpath(ctx.workspace)
    keep = _filter(args.glob, workspace)
    reads = ctx.surface.guard.reads

    def hidden(path: str) -> bool:
        return reads.denies(path) is not None

    query = Query(
        args.pattern, root, workspace, args.glob, args.fixed_strings, args.ignore_case, hidden
    )
    return query, keep


def _visibility(query: Query, keep: Filter | None) -> Visibility | None:
    """rg lets a glob override ignore files; this puts the ignore files back (globs narrow)."""
    if keep is None or not os.path.isdir(query.root):
        return None
    return Visibility(query.root, IgnoreTree(query.root), keep)


async def search(ctx: ToolContext, args: SearchArgs) -> dict[str, Any]:
    query, keep = _prepare(ctx, args)
    notes: list[str] = []
    tally: Tally | None = None
    rg = find_rg()
    if rg is None:
        notes.append(FALLBACK_NOTE.format(why="neither the ripgrep wheel nor PATH provides rg"))
    else:
        tally = Tally(args.max_results, COUNT_LIMIT)
        try:
            visibility = _visibility(query, keep)
            await run_rg(rg, query, tally, time_limit=SEARCH_TIMEOUT, visibility=visibility)
        except OSError as exc:
            notes.append(FALLBACK_NOTE.format(why=f"{rg.path} could not be started ({exc})"))
            tally = None
    engine = "ripgrep" if tally is not None else "python-fallback"
    if tally is None:
        tally = Tally(args.max_results, COUNT_LIMIT)
        await _fallback(query, tally, keep)
    shown = Shown(query.workspace, MAX_LINE_CHARS, MAX_SUBMATCHES)
    result = shape(tally, shown, engine=engine, pattern=args.pattern, root=query.root, notes=notes)
    if rg is not None and engine == "ripgrep":
        result["engine_source"] = f"{rg.source} ({rg.path})"
    return result
