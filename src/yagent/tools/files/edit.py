"""files.edit: `search_replace_in_file` — one exact, unique replacement.

Contract:
- `old_string` must occur exactly once (occurrences are counted overlapping, so "aa" in "aaa" is
  two). None → NOT_FOUND naming that; several → INVALID_ARGS with the count and line numbers.
- Line endings are part of the contract, and there is exactly one fallback: when the exact match
  fails and the file is uniformly CRLF (`lineends.Endings.uniform_crlf`), `\\r` is ignored in both
  the file and `old_string` and the match is tried again; only a unique hit is replaced, and CRLF
  is restored for the whole file (`line_endings: "crlf-normalized"`).
- An exact hit in a uniformly CRLF file writes `new_string` with CRLF endings too — a multi-line LF
  `new_string` would otherwise create mixed endings (`line_endings: "crlf-applied"`).
- A file with mixed endings is never normalised: when the exact match fails the refusal names the
  mixed endings as the reason. An exact hit there inserts `new_string` verbatim
  (`line_endings: "mixed"`); in an LF file nothing is converted (`line_endings: "lf"`).
- The receipt has the 1-based line where the change starts, the bytes written and a unified diff of
  the change (`difflib`, `DIFF_CONTEXT` lines of context, at most `MAX_DIFF_CHARS` characters; a cut
  diff ends with a visible marker and `diff_truncated: true`). The write is atomic; what the file
  held before is kept in the session's edit journal (`files.journal`) for `/diff` and `/undo`.
- Read and write act on the judged file through one descriptor of its directory (`files.judged`):
  the file is read with `O_NOFOLLOW` from that directory and the new content renamed into the
  same one. A path that changed after the check (a symbolic link on its way) is a CONFLICT
  failure; nothing is read from or written to where it points.
- Refused: empty `old_string`; `old_string` equal to `new_string`; either over `MAX_EDIT_BYTES`
  (10 MiB, UTF-8) (TOO_LARGE); files over `MAX_EDIT_FILE_BYTES` (they are edited in memory);
  binary or non-UTF-8 files; directories and non-regular files.

Blocking I/O and the matching run in a worker thread (`anyio.to_thread`): files may be large.
"""

from __future__ import annotations

import difflib
import errno
import functools
import os
import re
from dataclasses import dataclass
from typing import IO, Any

import anyio.to_thread

from yagent.kernel.confine.beneath import SymlinkMetError
from yagent.kernel.judge.toolfail import Kind, ToolFailure
from yagent.tools.adapter import ToolContext
from yagent.tools.atomicfile import atomic_write_at
from yagent.tools.files import common, journal, judged
from yagent.tools.files.judged import Judged
from yagent.tools.files.lineends import Endings, to_crlf, to_lf
from yagent.toolspec.params import SearchReplaceArgs

MAX_EDIT_BYTES = 10 * 1024 * 1024
MAX_EDIT_FILE_BYTES = 64 * 1024 * 1024
MAX_DIFF_CHARS = 4000
DIFF_CONTEXT = 3
_SHOWN_HIT_LINES = 20

_HUNK = re.compile(r"^@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@")


@dataclass(frozen=True, slots=True)
class Replacement:
    text: str
    line: int
    line_endings: str


def find_all(text: str, needle: str) -> list[int]:
    """Start offsets of every occurrence of `needle`, overlapping ones included."""
    hits: list[int] = []
    at = text.find(needle)
    while at != -1:
        hits.append(at)
        at = text.find(needle, at + 1)
    return hits


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _ambiguous(given: str, text: str, hits: list[int], how: str) -> ToolFailure:
    lines = [_line_of(text, at) for at in hits[:_SHOWN_HIT_LINES]]
    more = ", …" if len(hits) > _SHOWN_HIT_LINES else ""
    return ToolFailure(
        Kind.INVALID_ARGS,
        f"old_string occurs {len(hits)} times in {given}{how} (lines "
        f"{', '.join(map(str, lines))}{more}); it must be unique — include more surrounding "
        "context in old_string",
    )


def _not_found(given: str, text: str, old: str, ends: Endings) -> ToolFailure:
    msg = f"old_string was not found in {given}"
    if ends.mixed:
        would = (
            " (it would match if line endings were ignored)" if to_lf(old) in to_lf(text) else ""
        )
        msg += (
            f". The file has mixed line endings ({ends.describe()}), so no line-ending-insensitive "
            f"retry was made{would}: mixed endings are never normalised, because rewriting them "
            "would change lines you did not ask to edit. Copy the exact text, `\\r` included, "
            "from read_file"
        )
    elif "\r" in old and ends.crlf == 0:
        msg += ". old_string contains \\r but the file has LF line endings; use \\n"
    else:
        msg += "; copy the exact current text from read_file (whitespace and indentation count)"
    return ToolFailure(Kind.NOT_FOUND, msg)


def plan_replacement(text: str, old: str, new: str, given: str) -> Replacement:
    """The edited text, or the ToolFailure that explains why there is none."""
    ends = Endings.of(text)
    hits = find_all(text, old)
    if len(hits) > 1:
        raise _ambiguous(given, text, hits, "")
    if len(hits) == 1:
        at = hits[0]
        edited = text[:at] + new + text[at + len(old) :]
        if ends.uniform_crlf:
            # Also repairs a CRLF pair that old_string's edge split: `\r` + `\n...` → `\r\n...`.
            return Replacement(to_crlf(edited), _line_of(text, at), "crlf-applied")
        return Replacement(edited, _line_of(text, at), "mixed" if ends.mixed else "lf")
    if not ends.uniform_crlf:
        raise _not_found(given, text, old, ends)
    lf_text, lf_old = to_lf(text), to_lf(old)
    lf_hits = find_all(lf_text, lf_old)
    if len(lf_hits) > 1:
        raise _ambiguous(given, lf_text, lf_hits, " once \\r is ignored (the file uses CRLF)")
    if not lf_hits:
        raise ToolFailure(
            Kind.NOT_FOUND,
            f"old_string was not found in {given}, not even with \\r ignored (the file uses "
            "CRLF); copy the exact current text from read_file",
        )
    at = lf_hits[0]
    edited = lf_text[:at] + new + lf_text[at + len(lf_old) :]
    return Replacement(to_crlf(edited), _line_of(lf_text, at), "crlf-normalized")


def unified_diff(before: str, after: str, shown: str) -> tuple[str, bool]:
    """A unified diff of one localised change, computed on a window around it; (diff, cut)."""
    a, b = before.split("\n"), after.split("\n")
    if a[-1] == b[-1] == "":  # both end with a newline: no empty last "line" to show
        a.pop()
        b.pop()
    same = min(len(a), len(b))
    head = 0
    while head < same and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < same - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    lo = max(0, head - DIFF_CONTEXT)
    a_win = a[lo : min(len(a), len(a) - tail + DIFF_CONTEXT)]
    b_win = b[lo : min(len(b), len(b) - tail + DIFF_CONTEXT)]
    out: list[str] = []
    for line in difflib.unified_diff(
        a_win, b_win, f"a/{shown}", f"b/{shown}", n=DIFF_CONTEXT, lineterm=""
    ):
        match = _HUNK.match(line)
        if match:  # window-relative line numbers → file line numbers
            a0, alen, b0, blen = match.groups()
            line = f"@@ -{int(a0) + lo}{alen or ''} +{int(b0) + lo}{blen or ''} @@"
        out.append(line)
    text = "\n".join(out)
    if len(text) <= MAX_DIFF_CHARS:
        return text, False
    kept = text[:MAX_DIFF_CHARS].rsplit("\n", 1)[0]
    dropped = len(out) - (kept.count("\n") + 1)
    return f"{kept}\n… [diff truncated: {dropped} more lines]", True


def _check_strings(args: SearchReplaceArgs) -> None:
    if not args.old_string:
        raise ToolFailure(
            Kind.INVALID_ARGS,
            "old_string is empty; give the exact text to replace (use write_file to create or "
            "overwrite a whole file)",
        )
    if args.old_string == args.new_string:
        raise ToolFailure(Kind.INVALID_ARGS, "old_string and new_string are identical")
    for name in ("old_string", "new_string"):
        size = len(getattr(args, name).encode("utf-8"))
        if size > MAX_EDIT_BYTES:
            raise ToolFailure(
                Kind.TOO_LARGE,
                f"{name} is {size} bytes, over the edit limit of {MAX_EDIT_BYTES} bytes; "
                "split the edit, or write the file with write_file",
            )


def _read_text(dir_fd: int, name: str, given: str) -> tuple[str, bytes]:
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(name, flags, dir_fd=dir_fd)
    except FileNotFoundError:
        raise common.no_such_file(given) from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise SymlinkMetError(errno.ELOOP, "a symbolic link is in the way", name) from None
        raise
    try:
        st = common.check_regular_file(os.fstat(fd), given)
    except BaseException:
        os.close(fd)
        raise
    with os.fdopen(fd, "rb") as f:
        return _decode_file(f, st, given)


def _decode_file(f: IO[bytes], st: os.stat_result, given: str) -> tuple[str, bytes]:
    if st.st_size > MAX_EDIT_FILE_BYTES:
        raise ToolFailure(
            Kind.TOO_LARGE,
            f"{given} is {st.st_size} bytes, over the edit limit of {MAX_EDIT_FILE_BYTES} bytes "
            "for a file; edit it with run_bash (sed, a script)",
        )
    data = f.read()
    if common.looks_binary(data):
        raise common.binary_refusal(given)
    try:
        return data.decode("utf-8"), data
    except UnicodeDecodeError as exc:
        raise common.not_utf8_refusal(given, data.count(b"\n", 0, exc.start) + 1) from None


def _edit_sync(
    target: Judged, args: SearchReplaceArgs, shown: str
) -> tuple[dict[str, Any], bytes, bytes]:
    try:
        with judged.parent(target) as (dir_fd, name):
            before, raw = _read_text(dir_fd, name, args.path)
            plan = plan_replacement(before, args.old_string, args.new_string, args.path)
            data = plan.text.encode("utf-8")
            atomic_write_at(dir_fd, name, data)
    except FileNotFoundError:
        raise common.no_such_file(args.path) from None
    except IsADirectoryError:
        raise common.is_a_directory(args.path) from None
    except SymlinkMetError as exc:
        raise judged.changed(args.path, exc, "nothing was read or written") from None
    diff, cut = unified_diff(before, plan.text, shown)
    receipt = {
        "path": shown,
        "replaced": 1,
        "line": plan.line,
        "line_endings": plan.line_endings,
        "bytes_written": len(data),
        "diff": diff,
        "diff_truncated": cut,
    }
    return receipt, raw, data


async def search_replace_in_file(ctx: ToolContext, args: SearchReplaceArgs) -> dict[str, Any]:
    _check_strings(args)
    target = common.resolve(ctx, args.path)
    shown = common.shown_path(ctx, target.resolved)
    work = functools.partial(_edit_sync, target, args, shown)
    receipt, before, after = await anyio.to_thread.run_sync(work)
    await anyio.to_thread.run_sync(
        journal.record, ctx, "search_replace_in_file", shown, before, after
    )
    return receipt
