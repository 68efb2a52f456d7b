"""A standard output whose reader went away: noticed at once, said once, never raised.

Contract:
- `watch_hangup(fd, on_hangup)`: a daemon thread polls `fd` for POLLERR / POLLHUP only (a pipe
  whose read end closed, a terminal hung up) and calls `on_hangup` once — whether anything is
  being written or not. A descriptor that is only ever writable (a file, /dev/null) never wakes
  it; it looks every `HANGUP_POLL` seconds whether it is still wanted (`over`).
- `Guarded(stream)`: the human display's stdout, written in place. A write or flush that fails
  (EPIPE, or any OSError) — or a hang-up — ends it: later writes are counted and discarded, the
  descriptor is pointed at /dev/null (so Python's own stdout at exit and rich never fail on it
  again), `wait_gone` returns; nothing is raised out of the display. Every other attribute is
  the stream's.
- `Finish`: how a stream ended; `finished` says a reader that closed the pipe once every line was
  written lost nothing.
Leaves to the host: stopping its run, the exit status (`cli.lineout.end`).
"""

from __future__ import annotations

import contextlib
import errno
import os
import select
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TextIO

import anyio
import anyio.from_thread
import anyio.lowlevel

HANGUP_POLL = 0.5  # seconds between two looks at whether a hang-up watch is still wanted


@dataclass(frozen=True, slots=True)
class Finish:
    """How the stream ended: `written` every line; else `gone` (the write error) or `stalled`
    (the reader took nothing for the wait), with the lines never written."""

    written: bool
    gone: str = ""
    epipe: bool = False
    stalled: bool = False
    unwritten: int = 0


def finished(gone: str, epipe: bool, unwritten: int) -> Finish:
    """A reader that closed the pipe once every line was written lost nothing."""
    if not gone or (epipe and not unwritten):
        return Finish(True)
    return Finish(False, gone=gone, epipe=epipe, unwritten=unwritten)


def closed() -> OSError:
    return BrokenPipeError(errno.EPIPE, "the reader closed the pipe")


def watch_hangup(
    fd: int, on_hangup: Callable[[], None], over: Callable[[], bool] = lambda: False
) -> None:
    """Call `on_hangup` (from a daemon thread) once the reader of `fd` is gone — a pipe whose
    read end closed (POLLERR), a terminal hung up (POLLHUP) — whether or not anything is being
    written: a quiet run learns it at once, not at its next line. Asks poll for no event, so a
    descriptor that is only ever writable (a file, /dev/null) never wakes it; looks at `over`
    every `HANGUP_POLL` seconds (a poll holds its descriptor's file open while it waits)."""

    def watch() -> None:
        poller = select.poll()
        poller.register(fd, 0)
        while not over():
            try:
                events = poller.poll(HANGUP_POLL * 1000)
            except OSError:
                return
            for _, mask in events:
                if mask & select.POLLNVAL:
                    return
                if mask & (select.POLLERR | select.POLLHUP):
                    on_hangup()
                    return

    threading.Thread(target=watch, name="yagent-stdout-hangup", daemon=True).start()


class Guarded:
    """A text stream whose failed writes end it quietly (module contract); every other
    attribute is the stream's."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self.gone = ""
        self.epipe = False
        self.unwritten = 0
        self._event: anyio.Event | None = None
        self._token: anyio.lowlevel.EventLoopToken | None = None
        with contextlib.suppress(RuntimeError, LookupError, AttributeError, ValueError, OSError):
            self._token = anyio.lowlevel.current_token()
            watch_hangup(stream.fileno(), self._hung_up)

    def _hung_up(self) -> None:
        if self._token is not None:
            with contextlib.suppress(Exception):  # the loop has ended: nobody waits any more
                anyio.from_thread.run_sync(self._fail, closed(), token=self._token)

    def __getattr__(self, name: str) -> object:
        return getattr(self._stream, name)

    def write(self, text: str) -> int:
        if not self.gone:
            try:
                return self._stream.write(text)
            except (OSError, ValueError) as exc:
                self._fail(exc)
        self.unwritten += text.count("\n")
        return len(text)

    def flush(self) -> None:
        if not self.gone:
            try:
                self._stream.flush()
            except (OSError, ValueError) as exc:
                self._fail(exc)

    def isatty(self) -> bool:
        return not self.gone and self._stream.isatty()

    def _fail(self, exc: OSError | ValueError) -> None:
        if self.gone:
            return
        self.epipe = isinstance(exc, OSError) and exc.errno == errno.EPIPE
        self.gone = (exc.strerror if isinstance(exc, OSError) else "") or str(exc) or "failed"
        with contextlib.suppress(OSError, ValueError, AttributeError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self._stream.fileno())
            os.close(devnull)
        if self._event is not None:
            self._event.set()

    async def wait_gone(self) -> None:
        """Return once a write has failed (written from the event loop's thread)."""
        if not self.gone:
            self._event = self._event or anyio.Event()
            await self._event.wait()

    async def finish(self, wait: float) -> Finish:
        """Written in place: nothing waits; says whether a write failed."""
        return finished(self.gone, self.epipe, self.unwritten)
