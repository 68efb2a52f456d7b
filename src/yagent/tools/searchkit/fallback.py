"""searchkit.fallback: the pure-Python search used when no `rg` can be found.

Contract:
- Same files, same order and same per-line semantics as the rg engine: the `ignorewalk` walk
  (ignore files, `--glob` filter, hidden files, no `.git`, no symlinks, sorted), one match per
  line, `^`/`$` at line edges, CRLF lines keep their `\\r` for matching (as rg without `--crlf`).
- Binary files found by the walk are skipped at the first block holding a NUL byte (rg quits at
  its first NUL too); an explicitly named file is searched anyway, as rg does.
- The regex dialect is Python's `re` (rg's Rust syntax differs at the edges, e.g. no `\\pL`); a
  pattern `re` refuses raises `ToolFailure(INVALID_ARGS)` naming the problem and the dialect.
- Files are read in blocks (memory stays bounded on huge files); a block with no match at all
  is skipped without splitting it into lines, unless the pattern uses look-around or `\\A`/`\\Z`
  (their meaning changes across line boundaries).
- A line longer than `LONG_LINE_BYTES` is never held whole: it is searched in windows of one
  block plus the last `OVERLAP_CHARS` characters of the window before, decoded incrementally, and
  its first match is kept (shown around that match, its column counted from the line's start).
  A match longer than `OVERLAP_CHARS` that straddles two windows can be missed there: the tally
  lists every such line (`long_lines`) and the result says so.
- Stops when the tally is full, when the deadline passes (the tally says `timed_out`), or when
  `stop` is set (the caller was cancelled). Unreadable files are listed in the tally's errors.
"""

from __future__ import annotations

import codecs
import os
import re
import threading
import time
from dataclasses import dataclass

from yagent.kernel.judge.toolfail import Kind, ToolFailure
from yagent.tools.ignorewalk import Filter, IgnoreTree, walk_files
from yagent.tools.searchkit.results import Hit, Query, Tally

BLOCK_BYTES = 1 << 20  # a seam: tests lower it to cross block boundaries
LONG_LINE_BYTES = 4 << 20  # a seam: a line held whole at most; longer ones are windowed
OVERLAP_CHARS = 64 << 10  # a seam: what a window keeps of the one before
_LINE_BOUND = re.compile(r"\(\?<?[=!]|\\[AZ]")


def compile_pattern(query: Query) -> re.Pattern[str]:
    source = re.escape(query.pattern) if query.fixed_strings else query.pattern
    flags = re.MULTILINE | (re.IGNORECASE if query.ignore_case else 0)
    try:
        return re.compile(source, flags)
    except re.error as exc:
        raise ToolFailure(
            Kind.INVALID_ARGS,
            f"invalid regular expression {query.pattern!r}: {exc} (the Python fallback engine "
            "uses Python's re syntax)",
        ) from exc


@dataclass(slots=True)
class _Run:
    regex: re.Pattern[str]
    prefilter: bool
    tally: Tally
    deadline: float
    stop: threading.Event

    def over(self) -> bool:
        if self.tally.full or self.stop.is_set():
            return True
        if time.monotonic() >= self.deadline:
            self.tally.timed_out = True
            return True
        return False

    def scan(self, path: str, data: bytes, first_line: int) -> int:
        """Match the complete lines in `data`; returns the number of the last line read."""
        text = data.decode("utf-8", errors="replace")
        lines = text.split("\n")
        if text.endswith("\n"):
            lines.pop()
        if self.prefilter and self.regex.search(text) is None:
            return first_line + len(lines)
        for offset, line in enumerate(lines):
            spans = [(m.start(), m.end()) for m in self.regex.finditer(line)]
            if not spans:
                continue
            keep = self.tally.count()
            if self.tally.full:
                break
            if keep:
                shown = line.removesuffix("\r")
                spans = [(min(s, len(shown)), min(e, len(shown))) for s, e in spans]
                self.tally.hits.append(Hit(path, first_line + offset + 1, shown, spans))
        return first_line + len(lines)

    def search_file(self, path: str, explicit: bool, block_bytes: int) -> None:
        try:
            fh = open(path, "rb")  # noqa: SIM115 - closed by the with below
        except OSError as exc:
            self.tally.errors.append(f"{path}: {exc.strerror or exc}")
            return
        with fh:
            line = 0
            pending = b""  # the start of a line not ended yet: at most LONG_LINE_BYTES
            long: _LongLine | None = None
            while not self.over():
                chunk = fh.read(block_bytes)
                eof = not chunk
                if chunk and not explicit and b"\x00" in chunk:
                    return  # binary: rg stops at the first NUL as well
                if long is not None:
                    cut = chunk.find(b"\n")
                    if not eof and cut < 0:
                        long.feed(chunk)
                        continue
                    long.feed(chunk if eof else chunk[:cut], final=True)
                    line, long = line + 1, None
                    chunk = b"" if eof else chunk[cut + 1 :]
                data = pending + chunk
                cut = len(data) if eof else data.rfind(b"\n") + 1
                if cut:
                    line = self.scan(path, data[:cut], line)
                pending = data[cut:]
                if eof:
                    return
                if len(pending) > LONG_LINE_BYTES:
                    long = _LongLine(self, path, line + 1)
                    long.feed(pending)
                    pending = b""


class _LongLine:
    """One line too long to hold, searched window by window (see the module contract)."""

    __slots__ = ("_before", "_carry", "_decoder", "_done", "_number", "_path", "_run")

    def __init__(self, run: _Run, path: str, number: int) -> None:
        self._run = run
        self._path = path
        self._number = number
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._carry = ""  # the end of the previous window, its first character context only
        self._before = 0  # characters of the line before `_carry`
        self._done = False
        run.tally.long_lines.append(f"{path}:{number}")

    def feed(self, data: bytes, *, final: bool = False) -> None:
        if self._done:
            return
        text = self._decoder.decode(data, final)
        window = self._carry + text
        start = 1 if self._carry else 0  # `^` cannot match inside the line
        # Short of the end, a match touching the window's end may go on: the next window,
        # which starts OVERLAP_CHARS back, sees it whole.
        end = len(window) if final else len(window) - 1
        spans = [
            (m.start(), m.end())
            for m in self._run.regex.finditer(window, start, max(end, start))
            if final or m.end() < end
        ]
        if spans:
            self._done = True
            if self._run.tally.count():
                offset = self._before
                self._run.tally.hits.append(
                    Hit(self._path, self._number, window, spans, skipped=offset)
                )
            return
        keep = window[-(OVERLAP_CHARS + 1) :]
        self._before += len(window) - len(keep)
        self._carry = keep


def fallback_search(
    query: Query,
    tally: Tally,
    *,
    keep: Filter | None,
    timeout: float,
    stop: threading.Event,
) -> None:
    """Search `query` into `tally` (blocking; run it in a worker thread)."""
    regex = compile_pattern(query)
    prefilter = query.fixed_strings or _LINE_BOUND.search(query.pattern) is None
    run = _Run(regex, prefilter, tally, time.monotonic() + timeout, stop)
    explicit = os.path.isfile(query.root)
    tree = None if explicit else IgnoreTree(query.root)
    errors: list[str] = []
    for path in walk_files(query.root, tree=tree, keep=keep, stop=run.over, errors=errors):
        if query.hidden is not None and query.hidden(path):
            tally.hidden_files += 1
            continue
        run.search_file(path, explicit, BLOCK_BYTES)
        if run.over():
            break
    tally.errors += (tree.problems if tree is not None else []) + errors
