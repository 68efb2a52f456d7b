"""searchkit.rg: run ripgrep (found by `searchkit.locate`), read its `--json` stream into a `Tally`.

Contract:
- rg runs from an argv list, never a shell, with `--` before the pattern; `--no-config` and a
  scrubbed `RIPGREP_CONFIG_PATH` so a user's config cannot change results; `--no-ignore-global`
  (the fallback cannot read git's global excludes either); `--hidden` with `--glob !.git` last.
  Globs with `/` are relative to the workspace.
- rg searches the object the ring judged, never a second resolution of its path: the judged root
  is opened by descriptor from the workspace (`files.judged`: no symbolic link followed on the
  way — one met now means the path was swapped since the judgement, a CONFLICT failure), and rg
  runs *in* it (a directory: its working directory is that descriptor, `.` is searched) or *on*
  it (a file: `/proc/self/fd/N`). Its paths are mapped back to the judged path. A glob with `/`
  under a root that is not the workspace is applied by `Visibility` alone (rg would read it
  against the root). A root that cannot be opened now is the call's failure (a `ToolFailure` of
  its kind), never taken for an rg that could not start — which would run the fallback, and
  that opens by path. Before, a sandboxed job swapping a searched directory for a link to
  `~/.ssh` between the judgement and rg's start had rg search the hidden store.
- rg searches in parallel (no `--sort path`, which makes it single-threaded) and the reader
  keeps the `max_results` smallest (path, line) matches, paths compared component by component
  on their bytes (`path_key`: the order of `rg --sort path` and of the fallback's walk), so the
  kept lines are the same on every run and the same as the fallback's. rg prints each file's
  matches together, so a file sorting after the last kept line is counted, not parsed.
- When counting reaches the tally's limit the parallel pass is killed (the result says `more`)
  and a second pass with `--sort path` reads only the first `max_results` lines in path order,
  then is killed: many matches never cost a full scan. On timeout rg is killed (the tally says
  `timed_out`; the kept lines are then the first of the files read); on cancellation too.
- A `--glob` only narrows: matches in files the ignore rules hide (rg lets a glob override
  them) are not counted (`Visibility`).
- A JSON line longer than `MAX_RECORD_BYTES` (a match on a huge line: rg's record holds the whole
  line and one entry per match, many times the line's size) is never held: its head (path) and
  its line number are read as it streams past, the rest is dropped, and the match still counts,
  shown as a hit whose text says the line was too long to show and how large its record was.
- A pattern or glob rg refuses raises `ToolFailure(INVALID_ARGS)` with rg's own message; other
  rg complaints (unreadable files) are listed in the tally's errors.
"""

from __future__ import annotations

import base64
import bisect
import contextlib
import json
import os
import re
import stat
import subprocess
from collections.abc import AsyncIterable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
from anyio.abc import Process

from yagent.kernel.confine import beneath
from yagent.kernel.judge.toolfail import Kind, ToolFailure, classify
from yagent.tools.files import judged
from yagent.tools.ignorewalk import Visibility
from yagent.tools.searchkit.locate import Rg
from yagent.tools.searchkit.results import Hit, Query, Tally

# How rg's refusals of a pattern or glob begin (other stderr lines are per-file complaints).
_REFUSALS = ("rg: regex", "rg: error parsing glob", "rg: compiled regex")
MAX_RECORD_BYTES = 1024 * 1024  # a longer JSON line is read past, not held (see the contract)
_HEAD_BYTES = 64 * 1024  # of an over-long record kept: its type and path come first
_LINE_NUMBER = re.compile(rb'"line_number":(\d+)')


@dataclass(frozen=True, slots=True)
class Anchor:
    """Where rg runs and what it is given (see the module contract)."""

    fd: int  # the judged root, opened without following links
    cwd: str  # rg's working directory: the root itself, or the workspace for a file root
    target: str  # the path rg is given
    root: str  # the judged path, which rg's paths are mapped back onto

    def place(self, printed: str) -> str:
        """rg's path as the judged path it lies at."""
        if printed == self.target:
            return self.root
        rel = printed.removeprefix("./")
        return self.root if rel in ("", ".") else os.path.join(self.root, rel)


@contextlib.contextmanager
def anchored(query: Query) -> Iterator[Anchor]:
    """The judged root opened by descriptor (closed on leaving)."""
    spot = judged.Judged.of(Path(query.workspace), query.root)
    try:
        fd = judged.open_fd(spot, getattr(os, "O_PATH", os.O_RDONLY) | os.O_CLOEXEC)
    except beneath.SymlinkMetError as exc:
        raise judged.changed(query.root, exc, "nothing was searched") from None
    except OSError as exc:  # gone or changed since the judgement; never "rg could not start"
        raise ToolFailure(classify(exc), f"{query.root}: {exc.strerror or exc}") from None
    try:
        here = f"/proc/self/fd/{fd}"
        if stat.S_ISDIR(os.fstat(fd).st_mode):
            yield Anchor(fd, here, ".", query.root)
        else:
            yield Anchor(fd, query.workspace, here, query.root)
    finally:
        os.close(fd)


def build_argv(
    rg: str, query: Query, *, sort: bool = False, target: str | None = None
) -> list[str]:
    argv = [rg, "--json", "--no-config", "--hidden", "--no-ignore-global"]
    if sort:
        argv += ["--sort", "path"]
    if query.ignore_case:
        argv.append("--ignore-case")
    if query.fixed_strings:
        argv.append("--fixed-strings")
    if query.glob and ("/" not in query.glob or query.root == query.workspace):
        argv += ["--glob", query.glob]  # one with `/` under another root: `Visibility` alone
    argv += ["--glob", "!.git", "--", query.pattern, query.root if target is None else target]
    return argv


def _text(obj: dict[str, Any]) -> tuple[str, bytes | None]:
    """rg's {"text": ...} or {"bytes": base64} → text, plus the raw bytes when not UTF-8."""
    if "text" in obj:
        return str(obj["text"]), None
    raw = base64.b64decode(obj["bytes"])
    return raw.decode("utf-8", errors="replace"), raw


def _path(obj: dict[str, Any], place: Callable[[str], str] = str) -> str:
    if "text" in obj:
        return place(str(obj["text"]))
    return place(os.fsdecode(base64.b64decode(obj["bytes"])))


def _hit(data: dict[str, Any], place: Callable[[str], str] = str) -> Hit:
    text, raw = _text(data["lines"])
    text = text.removesuffix("\n").removesuffix("\r")
    spans: list[tuple[int, int]] = []
    if raw is None and text.isascii():
        spans = [(int(s["start"]), int(s["end"])) for s in data["submatches"]]
    else:
        encoded = raw if raw is not None else text.encode("utf-8")

        def chars(offset: int) -> int:
            return len(encoded[:offset].decode("utf-8", errors="replace"))

        spans = [(chars(int(s["start"])), chars(int(s["end"]))) for s in data["submatches"]]
    limit = len(text)
    spans = [(min(s, limit), min(e, limit)) for s, e in spans]
    return Hit(_path(data["path"], place), int(data["line_number"]), text, spans)


def path_key(path: str) -> tuple[bytes, ...]:
    """The order of `rg --sort path`: component by component, on the bytes of each name."""
    return tuple(os.fsencode(path).split(b"/"))


class _Reader:
    """Feeds rg's JSON lines into the tally, keeping the smallest (path, line) matches.

    `counting=False` is the sorted second pass: lines arrive in path order, none is counted, and
    the reader stops once `max_results` are kept.
    """

    def __init__(
        self,
        tally: Tally,
        visibility: Visibility | None,
        *,
        counting: bool,
        hidden: Callable[[str], bool] | None = None,
        place: Callable[[str], str] = str,
    ) -> None:
        self.place = place  # rg's paths as the judged paths they lie at
        self.tally = tally
        self.visibility = visibility
        self.hidden = hidden
        self.counts = counting
        self.visible = True  # whether the current file's matches count
        self.wanted = True  # whether the current file may still hold a kept line
        self.key: tuple[bytes, ...] = ()
        self.kept: list[tuple[tuple[bytes, ...], int, Hit]] = []

    def feed(self, line: bytes) -> bool:
        """False once nothing further can change this pass's result."""
        if line.startswith(b'{"type":"match"'):
            return self._match(lambda: _hit(json.loads(line)["data"], self.place))
        if line.startswith(b'{"type":"begin"'):
            path = _path(json.loads(line)["data"]["path"], self.place)
            self.visible = self.visibility is None or self.visibility.visible(path)
            if self.visible and self.hidden is not None and self.hidden(path):
                self.visible = False
                if self.counts:
                    self.tally.hidden_files += 1
            self.key = path_key(path)
            full = len(self.kept) >= self.tally.max_results
            self.wanted = self.visible and not (full and self.key > self.kept[-1][0])
        return True

    def feed_overlong(self, head: bytes, line_number: int | None, size: int) -> bool:
        """A record too long to hold: only a match matters, shown by its place and size."""
        if not head.startswith(b'{"type":"match"'):
            return True
        cut = head.find(b',"lines":')
        try:
            data = json.loads(head[:cut] + b"}}")["data"] if cut > 0 else None
            path = _path(data["path"], self.place) if data is not None else ""
        except (ValueError, KeyError, TypeError):
            path = ""
        if not path or line_number is None:
            self.tally.errors.append(f"a match record of {size} bytes could not be read")
            return True
        text = f"[line too long to show: its search record is {size} bytes]"
        return self._match(lambda: Hit(path, line_number, text, []))

    def _match(self, hit: Callable[[], Hit]) -> bool:
        """One matching line (`hit` reads it, only when it may be kept)."""
        if not self.visible:
            return True
        if self.counts:
            self.tally.count()
            if self.tally.full:
                return False
        if self.wanted:
            self._offer(hit())
            if not self.counts and len(self.kept) >= self.tally.max_results:
                return False
        return True

    def _offer(self, hit: Hit) -> None:
        item = (self.key, hit.line, hit)
        kept = self.kept
        if len(kept) >= self.tally.max_results:
            if (item[0], item[1]) >= (kept[-1][0], kept[-1][1]):
                self.wanted = False  # later lines of this file sort later still
                return
            kept.pop()
        bisect.insort(kept, item, key=lambda k: (k[0], k[1]))

    def finish(self) -> None:
        self.tally.hits[:] = [hit for _, _, hit in self.kept]

    async def consume(self, stream: AsyncIterable[bytes]) -> bool:
        """Read to the end of the stream; True when it stopped early."""
        pending: list[bytes] = []
        held = 0  # bytes in `pending`
        long: _Overlong | None = None  # the record being read past, once it grew too long
        async for chunk in stream:
            # A pipe that always has data never suspends the reader; without this checkpoint a
            # timeout or a cancellation could wait for rg to finish on its own.
            await anyio.lowlevel.checkpoint()
            if long is not None:
                end = chunk.find(b"\n")
                long.see(chunk if end < 0 else chunk[:end])
                if end < 0:
                    continue
                if not self.feed_overlong(long.head, long.line_number, long.size):
                    return True
                long, chunk = None, chunk[end + 1 :]
            if b"\n" not in chunk:
                pending.append(chunk)  # a long line in pieces; joined once it ends
                held += len(chunk)
                if held > MAX_RECORD_BYTES:
                    long = _Overlong(b"".join(pending))
                    pending, held = [], 0
                continue
            pending.append(chunk)
            lines = b"".join(pending).split(b"\n")
            pending = [lines.pop()]
            held = len(pending[0])
            for line in lines:
                if not self.feed(line):
                    return True
        return False


class _Overlong:
    """A JSON record read past as it streams: its head, its line number, its size."""

    def __init__(self, start: bytes) -> None:
        self.head = start[:_HEAD_BYTES]
        self.size = 0
        self.line_number: int | None = None
        self._tail = b""
        self.see(start)

    def see(self, piece: bytes) -> None:
        self.size += len(piece)
        if self.line_number is None:
            # the key can only stand unescaped between fields; a piece may split it
            found = _LINE_NUMBER.search(self._tail + piece)
            if found and found.end() < len(self._tail) + len(piece):
                self.line_number = int(found.group(1))
            self._tail = (self._tail + piece)[-64:]


async def _drain(stream: AsyncIterable[bytes] | None, into: bytearray) -> None:
    if stream is None:
        return
    async for chunk in stream:
        if len(into) < 65536:
            into += chunk


def _kill(proc: Process) -> None:
    if proc.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()


async def _pass(argv: list[str], anchor: Anchor, reader: _Reader, stderr: bytearray) -> int | None:
    """One rg process read by `reader`; rg is killed once it stops early or on cancellation."""
    env = {k: v for k, v in os.environ.items() if k != "RIPGREP_CONFIG_PATH"}
    with anyio.CancelScope(shield=True):  # started whole, so a timeout always has rg to kill
        proc = await anyio.open_process(
            argv, cwd=anchor.cwd, env=env, stdin=subprocess.DEVNULL, pass_fds=(anchor.fd,)
        )
    async with proc:
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(_drain, proc.stderr, stderr)
                assert proc.stdout is not None
                if await reader.consume(proc.stdout):
                    _kill(proc)  # rg has nothing more we need; its stderr then ends too
        except BaseException:
            _kill(proc)  # cancelled or timed out: never leave rg running
            raise
    return proc.returncode


async def run_rg(
    rg: Rg, query: Query, tally: Tally, *, time_limit: float, visibility: Visibility | None
) -> None:
    """Run rg for `query` into `tally`. OSError when rg cannot be started at all."""
    stderr = bytearray()
    returncode: int | None = None
    with anchored(query) as anchor, anyio.move_on_after(time_limit) as scope:
        place, target = anchor.place, anchor.target
        reader = _Reader(tally, visibility, counting=True, hidden=query.hidden, place=place)
        returncode = await _pass(build_argv(rg.path, query, target=target), anchor, reader, stderr)
        if tally.full:  # many matches: the first lines in path order, from a sorted pass
            reader = _Reader(tally, visibility, counting=False, hidden=query.hidden, place=place)
            argv = build_argv(rg.path, query, sort=True, target=target)
            await _pass(argv, anchor, reader, bytearray())
    tally.timed_out = scope.cancelled_caught
    reader.finish()
    message = stderr.decode("utf-8", errors="replace").strip()
    if returncode == 2 and tally.total == 0 and message.startswith(_REFUSALS):
        what = "glob" if "glob" in message.split("\n", 1)[0] else "regular expression"
        detail = message.removeprefix("rg: ")
        raise ToolFailure(Kind.INVALID_ARGS, f"invalid {what} (ripgrep syntax): {detail}")
    if message:
        tally.errors += [line.removeprefix("rg: ") for line in message.splitlines() if line][:50]
