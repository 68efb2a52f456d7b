"""files.read: `read_file` — paged, budgeted, byte-faithful reading of text files.

Contract:
- Per call at most `MAX_READ_LINES` lines and `MAX_READ_BYTES` bytes of file content (a line's
  bytes include its `\\n`), whichever comes first, and at most `limit` lines when given. The result
  says which one stopped it (`truncated_by`: "lines" | "bytes" | "limit" | None), whether more lines
  remain (`more`) and where to go on (`next_offset`). The first line of a call is returned whole
  when its content (without `\\n`) fits the byte budget; a line longer than that is cut on a UTF-8
  character boundary with a visible marker and listed in `cut_lines` — paging then goes on with
  the next line.
- Files larger than `MAX_FILE_SIZE_FOR_READ` are refused outright (TOO_LARGE). Below it the file
  is streamed: the offset is reached by counting `\\n` in fixed-size chunks and lines are read with
  bounded `readline`, so memory is bounded by the budgets, never by the file.
- Lines are split on `\\n` only; `\\r` stays in the line content, so the returned text is the disk
  bytes (numbering aside). Output: one line per file line, `f"{n:>6}\\t{text}"`, joined by `\\n`.
- `total_lines` is given when known cheaply: the read reached the end of the file, or the file is
  at most `COUNT_LINES_MAX_BYTES` (counted in one chunked pass); otherwise None.
- The file read is the one the ring judged: opened through `files.judged` (descriptors walked
  beneath the judged resolution, no symbolic link followed; opened non-blocking and checked with
  `fstat`, so a FIFO swapped in cannot hang the call). A path that changed after the check is a
  CONFLICT failure and nothing of it is returned.
- Refused: binary files (a NUL byte in the first `BINARY_SNIFF_BYTES`), content that is not UTF-8
  (the line is named; bytes are never shown altered), directories and non-regular files, and an
  offset past the last line (the message gives `total_lines`). An empty file read from offset 1
  is an empty result with `total_lines: 0`.

Why these numbers: read_file results are the first thing context compression cuts, and reading
more later is cheap while an extra step resends the whole context — so a call returns a generous
page (2000 lines / 256 KiB). The absolute refusal (2 GiB) is not about memory (reading streams) but
about time and sense: an offset deep into the file is reached by scanning from the start, and
paging a multi-GiB file 256 KiB at a time is not a plan — `search` or `run_bash` is. It sits above
1 GiB so the 1 GB streaming benchmark is a real read.

Blocking I/O runs in a worker thread (`anyio.to_thread`): a deep offset scans up to the size
limit, and parallel read-only calls must not stall the event loop.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass, field
from typing import IO, Any

import anyio.to_thread

from yagent.kernel.confine.beneath import SymlinkMetError
from yagent.kernel.judge.toolfail import Kind, ToolFailure
from yagent.tools.adapter import ToolContext
from yagent.tools.files import common, judged
from yagent.tools.files.judged import Judged
from yagent.toolspec.params import ReadFileArgs

MAX_READ_LINES = 2000
MAX_READ_BYTES = 256 * 1024
MAX_FILE_SIZE_FOR_READ = 2 * 1024**3
COUNT_LINES_MAX_BYTES = 8 * 1024 * 1024
CHUNK_BYTES = 1024 * 1024


@dataclass(slots=True)
class _Page:
    lines: list[tuple[int, str]] = field(default_factory=list)
    used: int = 0
    cut: list[int] = field(default_factory=list)
    truncated_by: str | None = None
    next_offset: int | None = None
    eof_line: int | None = None  # the file's line count, once the read has reached its end


def count_lines(f: IO[bytes]) -> int:
    """Lines in the rest of `f`: every `\\n` ends one, and a non-empty tail without one counts."""
    lines = 0
    last = b""
    while chunk := f.read(CHUNK_BYTES):
        lines += chunk.count(b"\n")
        last = chunk
    return lines + (1 if last and not last.endswith(b"\n") else 0)


def skip_lines(f: IO[bytes], n: int) -> int:
    """Move `f` past `n` lines; returns how many it passed (fewer only at end of file)."""
    passed = 0
    last = b""
    while passed < n:
        start = f.tell()
        chunk = f.read(CHUNK_BYTES)
        if not chunk:  # a tail without `\n` is one more (last) line
            return passed + (1 if last and not last.endswith(b"\n") else 0)
        last = chunk
        found = chunk.count(b"\n")
        if passed + found < n:
            passed += found
            continue
        pos = -1
        for _ in range(n - passed):
            pos = chunk.index(b"\n", pos + 1)
        f.seek(start + pos + 1)
        return n
    return passed


def _rest_of_line(f: IO[bytes]) -> tuple[int, bool]:
    """Consume the rest of the current line in bounded chunks: (bytes consumed, ended by `\n`)."""
    total = 0
    while piece := f.readline(CHUNK_BYTES):
        total += len(piece)
        if piece.endswith(b"\n"):
            return total, True
    return total, False


def _char_boundary(raw: bytes, at: int) -> int:
    # Back off while the first excluded byte continues a multi-byte UTF-8 character.
    while at > 0 and at < len(raw) and raw[at] & 0xC0 == 0x80:
        at -= 1
    return at


def _decode(raw: bytes, given: str, line: int) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise common.not_utf8_refusal(given, line) from None


def _at_eof(f: IO[bytes]) -> bool:
    pos = f.tell()
    if f.read(1):
        f.seek(pos)
        return False
    return True


def _read_page(f: IO[bytes], offset: int, limit: int | None, given: str) -> _Page:
    page = _Page()
    max_lines = MAX_READ_LINES if limit is None else min(limit, MAX_READ_LINES)
    stop_reason = "limit" if limit is not None and limit < MAX_READ_LINES else "lines"
    n = offset
    while True:
        if len(page.lines) >= max_lines:
            if _at_eof(f):
                page.eof_line = n - 1
            else:
                page.truncated_by, page.next_offset = stop_reason, n
            return page
        remaining = MAX_READ_BYTES - page.used
        raw = f.readline(max(remaining, 0) + 1)
        if not raw:
            page.eof_line = n - 1
            return page
        # The first line of a page may overshoot by its `\n` alone: its content is shown whole.
        if len(raw) <= remaining or (not page.lines and raw.endswith(b"\n")):
            body = raw[:-1] if raw.endswith(b"\n") else raw
            page.lines.append((n, _decode(body, given, n)))
            page.used += len(raw)
            n += 1
            continue
        if page.lines:  # this line does not fit beside the others: it starts the next page
            page.truncated_by, page.next_offset = "bytes", n
            return page
        _cut_first_line(f, page, raw, remaining, n, given)
        return page


def _cut_first_line(f: IO[bytes], page: _Page, raw: bytes, budget: int, n: int, given: str) -> None:
    # Only a line longer than the budget gets here, so `raw` holds no `\n`.
    rest, has_newline = _rest_of_line(f)
    full = len(raw) + rest - (1 if has_newline else 0)
    at = _char_boundary(raw, budget)
    shown = _decode(raw[:at], given, n)
    page.lines.append((n, f"{shown} … [line {n} cut: {at} of {full} bytes shown]"))
    page.used += at
    page.cut.append(n)
    page.truncated_by = "bytes"
    if _at_eof(f):
        page.eof_line = n
    else:
        page.next_offset = n + 1


def open_judged(target: Judged, given: str) -> tuple[IO[bytes], os.stat_result]:
    """The judged file opened for reading, and its fstat (a regular file's, else a refusal)."""
    try:
        fd = judged.open_fd(target, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
    except FileNotFoundError:
        raise common.no_such_file(given) from None
    except SymlinkMetError as exc:
        raise judged.changed(given, exc, "nothing was read") from None
    try:
        st = common.check_regular_file(os.fstat(fd), given)
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "rb"), st


def _read_sync(target: Judged, args: ReadFileArgs, shown: str) -> dict[str, Any]:
    given = args.path
    f, st = open_judged(target, given)
    with f:
        return _read_open(f, st, args, shown)


def _read_open(f: IO[bytes], st: os.stat_result, args: ReadFileArgs, shown: str) -> dict[str, Any]:
    given = args.path
    if st.st_size > MAX_FILE_SIZE_FOR_READ:
        raise ToolFailure(
            Kind.TOO_LARGE,
            f"{given} is {st.st_size} bytes, over the read limit of {MAX_FILE_SIZE_FOR_READ} "
            "bytes; look at parts of it with search or run_bash (grep, head, tail, sed -n)",
        )
    if common.looks_binary(f.read(common.BINARY_SNIFF_BYTES)):
        raise common.binary_refusal(given)
    total: int | None = None
    if st.st_size <= COUNT_LINES_MAX_BYTES:
        f.seek(0)
        total = count_lines(f)
    f.seek(0)
    passed = skip_lines(f, args.offset - 1)
    if passed < args.offset - 1 or (args.offset > 1 and _at_eof(f)):
        lines = passed if passed < args.offset - 1 else args.offset - 1
        raise ToolFailure(
            Kind.INVALID_ARGS,
            f"offset {args.offset} is past the end of {given}: it has {lines} lines",
        )
    page = _read_page(f, args.offset, args.limit, given)
    if page.eof_line is not None:
        total = page.eof_line
    return _result(shown, args.offset, page, total, st.st_size)


def _result(shown: str, offset: int, page: _Page, total: int | None, size: int) -> dict[str, Any]:
    content = "\n".join(f"{n:>6}\t{text}" for n, text in page.lines)
    result: dict[str, Any] = {
        "path": shown,
        "content": content,
        "offset": offset,
        "lines_returned": len(page.lines),
        "bytes_returned": page.used,
        "total_lines": total,
        "size": size,
        "more": page.next_offset is not None,
        "next_offset": page.next_offset,
        "truncated_by": page.truncated_by,
    }
    if page.cut:
        result["cut_lines"] = page.cut
    if page.next_offset is not None:
        stopped = {"lines": "the line budget", "bytes": "the byte budget", "limit": "your limit"}
        reason = stopped[page.truncated_by or "lines"]
        result["note"] = (
            f"stopped by {reason}; more lines remain — call again with offset={page.next_offset}"
        )
    return result


async def read_file(ctx: ToolContext, args: ReadFileArgs) -> dict[str, Any]:
    target = common.resolve(ctx, args.path)
    shown = common.shown_path(ctx, target.resolved)
    work = functools.partial(_read_sync, target, args, shown)
    return await anyio.to_thread.run_sync(work)
