"""Running one child process so that nothing it starts outlives the run.

The child starts in a new session (its own process group). When the run ends — the child exits,
the timeout passes, or the caller's scope is cancelled — the whole group is sent SIGKILL, so
background children die with it. Output (stdout and stderr interleaved) is read until EOF so the
child never blocks on a full pipe; past `limit` it is counted, not kept. If something outside the
group still holds the pipe `DRAIN_GRACE` seconds after the group was killed, reading stops and the
result says `truncated`. Cancellation propagates after the group is killed and the child reaped.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import anyio
import anyio.abc

DRAIN_GRACE = 2.0
"""Seconds to keep reading after the group was killed (a seam tests patch)."""


@dataclass(frozen=True, slots=True)
class Finished:
    exit_code: int
    output: bytes
    timed_out: bool
    truncated: bool
    dropped: int


class _Sink:
    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.kept = bytearray()
        self.dropped = 0
        self.closed = anyio.Event()

    def add(self, chunk: bytes) -> None:
        room = max(self.limit - len(self.kept), 0)
        self.kept += chunk[:room]
        self.dropped += max(len(chunk) - room, 0)


async def _pump(stream: anyio.abc.ByteReceiveStream, sink: _Sink) -> None:
    try:
        async for chunk in stream:
            sink.add(chunk)
    except (anyio.ClosedResourceError, anyio.BrokenResourceError):
        pass
    finally:
        sink.closed.set()


def kill_group(pid: int) -> None:
    """SIGKILL the process group led by `pid`; a group that is already gone is fine."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


async def run_process(
    argv: Sequence[str],
    *,
    cwd: str,
    env: Mapping[str, str],
    deadline: float | None,
    limit: int,
    pass_fds: Sequence[int] = (),
) -> Finished:
    """Run `argv` to completion (see the module docstring); `deadline` is in seconds.

    The deadline is a parameter rather than the caller's cancel scope because a timeout is a
    result here (`timed_out`, output kept), not a cancellation.
    """
    proc = await anyio.open_process(
        list(argv),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        cwd=cwd,
        env=dict(env),
        start_new_session=True,
        pass_fds=tuple(pass_fds),
    )
    sink = _Sink(limit)
    timed_out = cut = killed = False
    try:
        async with anyio.create_task_group() as tasks:
            if proc.stdout is not None:  # always: opened with PIPE above
                tasks.start_soon(_pump, proc.stdout, sink)
            with anyio.move_on_after(deadline) as waited:
                await proc.wait()
            timed_out = waited.cancelled_caught
            kill_group(proc.pid)
            killed = True
            await proc.wait()
            with anyio.move_on_after(DRAIN_GRACE) as drain:
                await sink.closed.wait()
            cut = drain.cancelled_caught
            tasks.cancel_scope.cancel()
    finally:
        with anyio.CancelScope(shield=True):
            if not killed:  # cancelled from outside: the group still dies with the run
                kill_group(proc.pid)
            await proc.aclose()
    code = proc.returncode
    return Finished(
        exit_code=code if code is not None else -signal.SIGKILL,
        output=bytes(sink.kept),
        timed_out=timed_out,
        truncated=cut or sink.dropped > 0,
        dropped=sink.dropped,
    )
