"""The `--json` stream's way to standard output: written by a thread, never by the run.

A reader of stdout that stops reading (a full pipe) must not stop the run: a blocking write in
the event loop's thread would halt every tool call, timeout and signal with it. `LineOut` takes
each line at once (`write` never blocks) and a writer thread of its own hands the lines to the
file descriptor, in the order they were written.

Contract:
- Lossless while the disk holds: up to `MEMORY` bytes of lines wait in memory; past that the
  waiting lines go to an unlinked temporary file (the overflow) and are read back from it in
  order once the reader catches up — the lines held wait under `MEMORY` plus one line (`held`),
  and the writer holds at most `BATCH` more while it writes, whatever the reader does. A line
  the overflow cannot take (a full disk) is lost, and the stream says so in place, before the
  next line it carries: `{"type": "dropped", "counts": {"line": N}, "reason": ...}`.
- A write that fails (EPIPE: the reader closed the pipe; any other OSError) ends the stream: what
  waits is discarded, later lines are counted and discarded, `gone` says why and `on_gone` is
  called once, from the writer thread (the host stops its run). A reader that closes the pipe
  is noticed at once, written to or not (`watch_hangup`: poll's POLLERR / POLLHUP); one that
  closes it after the last line lost nothing, and `finish` says every line was written.
- `finish(wait)` closes the stream and waits until every line is written, the stream is gone, or
  the reader took nothing for `wait` seconds in a row since `finish` was called (`stalled`: the
  clock restarts whenever it takes bytes, so a slow reader is served to the end). `Finish` says
  which, and how many lines were never written. The writer thread is a daemon: a reader that
  never resumes does not keep the process alive once the host exits.
The human display's stdout, written in place, is `cli.stdoutgone.Guarded`.
`end` is the CLI's close: it finishes the stream and, when a line was not written, says so in
one line on stderr naming the session and gives the exit status — `EXIT_CLOSED` (141, as a
command killed by SIGPIPE) when the reader closed the pipe, `EXIT_FAILED` (74, EX_IOERR) when it
did not read for the wait or another write error ended the stream.
A host that stopped its work because the reader went away says so (`stopped`): then it is 141
even when the reader had taken every line written so far.
Leaves to the host: what the lines are, when to finish, stopping the run when the stream is gone.
"""

from __future__ import annotations

import collections
import contextlib
import errno
import json
import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from typing import IO, TextIO, cast

import anyio
import anyio.from_thread
import anyio.lowlevel

from yagent.cli.stdoutgone import Finish, Guarded, closed, finished, watch_hangup

MEMORY = 4 * 1024 * 1024
"""Bytes of lines waiting in memory before the overflow file takes them (a seam)."""
CHUNK = 64 * 1024  # bytes read back from the overflow at a time
BATCH = 1024 * 1024  # bytes of waiting lines joined into one write at most
POLL = 0.05  # seconds between two looks at the writer while `finish` waits
WAIT = 60.0  # seconds `finish` waits for a reader that takes nothing, unless configured
EXIT_CLOSED = 141
EXIT_FAILED = 74


class LineOut:
    def __init__(self, target: int | TextIO = 1, on_gone: Callable[[], None] | None = None) -> None:
        """`target`: a file descriptor (written with `os.write`), or a text stream that has none
        (a test's captured stdout)."""
        self._target = target
        self.on_gone = on_gone
        self._cond = threading.Condition()
        self._memory: collections.deque[bytes] = collections.deque()
        self._held = 0  # bytes in `_memory`
        self._overflow: IO[bytes] | None = None
        self._spilled = 0  # bytes appended to the overflow
        self._read = 0  # bytes of the overflow taken back
        self._lines = 0  # lines waiting (memory and overflow)
        self._lost = 0  # lines the overflow could not take, not yet said
        self._lost_why = ""
        self._closed = False
        self.gone = ""
        self.epipe = False
        self.unwritten = 0  # lines discarded once the stream was gone
        self.progress = time.monotonic()  # when the reader last took bytes
        self._busy = False  # the writer holds a chunk it has not finished writing
        # set in the event loop once the stream is gone (made outside one: `wait_gone` is not
        # for it)
        self._token: anyio.lowlevel.EventLoopToken | None = None
        self._gone: anyio.Event | None = None
        with contextlib.suppress(RuntimeError, LookupError):
            self._token = anyio.lowlevel.current_token()
            self._gone = anyio.Event()
        self._thread = threading.Thread(target=self._run, name="yagent-stdout", daemon=True)
        self._thread.start()
        if isinstance(target, int):
            watch_hangup(target, lambda: self._fail(closed()), lambda: self._closed)

    # -- the run's side --------------------------------------------------------------------
    def write(self, text: str) -> int:
        """Queue `text` (whole lines) for the reader; never blocks (module contract)."""
        data = text.encode("utf-8", "surrogateescape")
        lines = text.count("\n") or 1
        with self._cond:
            if self.gone or self._closed:
                self.unwritten += lines
                return len(text)
            if self._lost:  # said in place, before the next line the stream carries
                if not self._queue(self._said_lost()):
                    self._lost += lines
                    return len(text)
                self._lost = 0
                self._lines += 1
            if not self._queue(data):
                self._lost += lines
                return len(text)
            self._lines += lines
            self._cond.notify()
        return len(text)

    def flush(self) -> None:
        """Nothing to do: the writer thread writes as soon as the reader takes bytes."""

    def isatty(self) -> bool:
        return False

    def held(self) -> int:
        """Bytes of lines waiting in memory (bounded: module contract)."""
        with self._cond:
            return self._held

    def _said_lost(self) -> bytes:
        line = {"type": "dropped", "counts": {"line": self._lost}, "reason": self._lost_why}
        return (json.dumps(line) + "\n").encode()

    def _queue(self, data: bytes) -> bool:
        """Append `data` behind everything waiting: memory while there is room and nothing is in
        the overflow, else the overflow. False when the overflow failed (said later)."""
        if self._spilled == self._read and self._held + len(data) <= MEMORY:
            self._memory.append(data)
            self._held += len(data)
            return True
        try:
            if self._overflow is None:
                self._overflow = tempfile.TemporaryFile(prefix="yagent-stdout-")  # noqa: SIM115
            os.pwrite(self._overflow.fileno(), data, self._spilled)
        except OSError as exc:
            self._lost_why = f"stdout's overflow file failed: {exc.strerror or exc}"
            return False
        self._spilled += len(data)
        return True

    # -- the writer thread -----------------------------------------------------------------
    def _take(self) -> bytes | None:
        """The next bytes to write, in order; None once closed with nothing left or gone."""
        with self._cond:
            while True:
                if self.gone:
                    return None
                if self._memory:  # what gathered meanwhile, in one write
                    parts = [self._memory.popleft()]
                    size = len(parts[0])
                    while self._memory and size < BATCH:
                        parts.append(self._memory.popleft())
                        size += len(parts[-1])
                    self._held -= size
                    self._busy = True
                    return b"".join(parts)
                if self._overflow is not None and self._read < self._spilled:
                    size = min(CHUNK, self._spilled - self._read)
                    data = os.pread(self._overflow.fileno(), size, self._read)
                    self._read += len(data)
                    if self._read == self._spilled:  # caught up: the file is reused from 0
                        self._overflow.truncate(0)
                        self._read = self._spilled = 0
                    self._busy = True
                    return data
                if self._closed:
                    return None
                self._cond.wait()

    def _run(self) -> None:
        while (data := self._take()) is not None:
            try:
                self._write_all(data)
            except (OSError, ValueError) as exc:  # ValueError: a text stream that was closed
                self._fail(exc)
                return
            with self._cond:
                self._busy = False
                self._cond.notify_all()

    def _write_all(self, data: bytes) -> None:
        if not isinstance(self._target, int):
            self._target.write(data.decode("utf-8", "surrogateescape"))
            self._target.flush()
            self._sent(data.count(b"\n"))
            return
        view, at = memoryview(data), 0
        while at < len(data):
            # a pipe takes a large write whole or blocks: slices let the counts follow the reader
            sent = os.write(self._target, view[at : at + CHUNK])
            self._sent(data.count(b"\n", at, at + sent))
            at += sent

    def _sent(self, lines: int) -> None:
        """The reader took bytes holding `lines` line ends."""
        self.progress = time.monotonic()
        with self._cond:
            self._lines = max(self._lines - lines, 0)

    def _fail(self, exc: OSError | ValueError) -> None:
        with self._cond:
            if self.gone:
                return
            self.epipe = isinstance(exc, OSError) and exc.errno == errno.EPIPE
            self.gone = (exc.strerror if isinstance(exc, OSError) else "") or str(exc) or "failed"
            self.unwritten += self._lines + self._lost
            self._memory.clear()
            self._held = self._lines = self._lost = 0
            self._busy = False
            if self._overflow is not None:
                with contextlib.suppress(OSError):
                    self._overflow.close()
                self._overflow = None
            self._cond.notify_all()
        if self.on_gone is not None:
            self.on_gone()
        if self._token is not None and self._gone is not None:
            with contextlib.suppress(Exception):  # the loop has ended: nobody waits any more
                anyio.from_thread.run_sync(self._gone.set, token=self._token)

    async def wait_gone(self) -> None:
        """Return once a write has failed (the stream is gone); never for a stream made outside
        an event loop."""
        if self._gone is None:
            await anyio.sleep_forever()
        else:
            await self._gone.wait()

    # -- the end -----------------------------------------------------------------------------
    def _done(self) -> bool:
        with self._cond:
            waiting = self._memory or self._read < self._spilled or self._busy
            return bool(self.gone) or not waiting

    async def drained(self) -> None:
        """Return once every line written so far is written (or the stream is gone)."""
        while not self._done():  # noqa: ASYNC110 - the writer is a thread: its progress is polled
            await anyio.sleep(POLL)

    async def finish(self, wait: float) -> Finish:
        """Close the stream and wait for the reader (module contract)."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        began = time.monotonic()
        while not self._done():
            if time.monotonic() - max(self.progress, began) > wait:
                with self._cond:
                    left = self._lines + self._lost
                return Finish(False, stalled=True, unwritten=left)
            await anyio.sleep(POLL)
        return finished(self.gone, self.epipe, self.unwritten)


def session_kept(session_id: str) -> str:
    """What `end` says is kept of a run: its session, and how to look at it or go on."""
    if not session_id:
        return "no session was started"
    return (
        f"session {session_id} is saved (`yagent sessions show {session_id}`; `yagent resume "
        f"{session_id}` continues a stopped run)"
    )


async def end(
    out: LineOut | Guarded, wait: float, kept: str, *, stopped: bool = False
) -> int | None:
    """Finish `out` (module contract); None when every line was written and the host did not
    stop its work for a reader that went away (`stopped`), else the exit status, after one
    line on stderr ending with `kept` (what is saved, and how to go on)."""
    done = await out.finish(wait)
    if done.written and not stopped:
        return None
    if done.written:  # every line was taken, but the reader left before the work was done
        done = Finish(False, gone=out.gone or "closed", epipe=out.epipe)
    lines = f"{done.unwritten} line(s) not written"
    if done.stalled:
        said = f"stdout was not read for {wait:g}s at the end of the run: {lines}; {kept}"
    elif done.epipe:
        said = f"stdout was closed by its reader: the run was stopped; {lines}; {kept}"
    else:
        said = f"stdout failed ({done.gone}): the run was stopped; {lines}; {kept}"
    with contextlib.suppress(OSError):  # stderr may have gone with stdout
        os.write(2, f"yagent: {said}\n".encode())
    return EXIT_CLOSED if done.epipe else EXIT_FAILED


def stdout() -> LineOut:
    """A stream to this process's standard output: its file descriptor when it has one (what
    Python's own stdout holds is written first), else the stream itself."""
    sys.stdout.flush()
    try:
        return LineOut(sys.stdout.fileno())
    except (AttributeError, OSError, ValueError):  # a stream without a descriptor
        return LineOut(sys.stdout)


def display(json_mode: bool) -> TextIO | None:
    """Where a command's display writes: None for --json (the renderer makes its `LineOut`); a
    pipe or a file through a `LineOut` too; a terminal in place, `Guarded`."""
    if json_mode:
        return None
    if sys.stdout.isatty():
        return cast(TextIO, Guarded(sys.stdout))
    return cast(TextIO, stdout())
