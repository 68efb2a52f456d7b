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
- Stops when the tally is full, when the deadline passes (the tally says `timed_out`), or when
  `stop` is set (the caller was cancelled). Unreadable files are listed in the tally's errors.
"""

from __future__ import annotations

import os
import re
import threading
import time
from dataclasses import dataclass

from yagent.kernel.judge.toolfail import Kind, ToolFailure
from yagent.tools.ignorewalk import Filter, IgnoreTree, walk_files
from yagent.tools.searchkit.results import Hit, Query, Tally

BLOCK_BYTES = 1 << 20  # a seam: tests lower it to cross block boundaries
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
            pending: list[bytes] = []
            while not self.over():
                chunk = fh.read(block_bytes)
                if chunk and not explicit and b"\x00" in chunk:
                    return  # binary: rg stops at the first NUL as well
                if chunk and b"\n" not in chunk:
                    pending.append(chunk)  # a long line in pieces
                    continue
                data = b"".join([*pending, chunk])
                cut = data.rfind(b"\n") + 1 if chunk else len(data)
                pending = [data[cut:]]
                if cut:
                    line = self.scan(path, data[:cut], line)
                if not chunk:
                    return


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
