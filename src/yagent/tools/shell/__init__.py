"""shell: the execution engine behind `run_bash`.

Guarantees:
- Foreground runs (`run_foreground`) start `bash -c` in a new session, so the command and everything
  it starts form one process group that the run owns. On timeout or on cancellation of the caller's
  scope the whole group is terminated (SIGTERM, then SIGKILL after `KILL_GRACE`), never just bash.
- The wait is bounded even when a descendant (`cmd &`, `setsid cmd`) keeps the output pipe open:
  once bash itself has exited, output is awaited for at most `WAIT_DELAY`, then reading stops and
  the result is `Receipt.PIPES_HELD` with bash's real exit code and a note pointing at
  `is_background`. That descendant is left alone: once the command has exited, what it left
  running is the user's.
- Every way a run ends has its own receipt and text (success, pipes held, timeout, cancelled,
  non-zero exit); the model never sees a bare "signal: killed".
- Output (stdout and stderr interleaved) is kept up to `MAX_SHELL_OUTPUT_BYTES` in memory, its
  head and its tail (half each, `_Capture`); what lies between is still read and counted, then
  dropped, so the command never dies of SIGPIPE because its output was large and a flood of any
  size holds no more than the cap. Truncation is recorded (`truncated`, `total_bytes`,
  `shown_bytes`) and stated in the text, at the cut. Output that is not text (`result.binary`)
  reaches the text as a short hex excerpt and its size, never as decoded noise (ADR 0030).
- In-flight foreground groups are registered (`live_groups`) from spawn until the run returns, so
  a hard exit can kill them all (`kill_live_process_groups`). Background runs are never registered.
- Under a sandbox's limits (`supervision`), the run is polled every `supervision.interval`: a
  breach (the process limit reached) kills the group at once and the result is `Receipt.LIMIT`
  naming it; a run that ended by itself is `Receipt.LIMIT` too when `supervision.explain` names
  the limit that ended it (with its real exit code).
- Background runs (`run_background`) get their own session and write to a log file; nothing in this
  module signals them after `run_background` returns, whatever happens to the caller's scope.

Cancellation: a cancelled foreground run kills its group while shielded, hands a
`Receipt.CANCELLED` result to `on_cancelled` (if given, so a host can still answer the tool call
with the partial output) and re-raises the cancellation; it is never swallowed. The timeout covers
bash's own lifetime only: after bash has exited, `WAIT_DELAY` alone bounds the wait.

Refuses: non-positive timeouts (`ValueError`). Spawn failures (missing `cwd`, no bash, a command
line longer than the kernel takes) are a `SpawnError` (an `OSError` with the spawn's errno):
nothing ran. Leaves to the host: authorization of the command, the sandbox, and where logs live.
A `launcher` (the host's sandbox) rewrites the `bash -c` argv into the one to spawn; the group the
run owns is then the launcher's (bubblewrap's), whose sandbox dies with it.
Runs on anyio's asyncio backend only: it needs the subprocess transport to close the pipe itself.
Layout: this module holds the seams and the engine; `result` the value objects and model texts;
`procgroup` group signalling and the in-flight registry.
"""

from __future__ import annotations

import asyncio
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path

import anyio
import anyio.to_thread

from yagent.kernel.confine.sandbox import Supervision
from yagent.tools.shell.procgroup import (
    LiveGroup,
    group_alive,
    kill_live_process_groups,
    live_groups,
    register,
    signal_group,
    unregister,
)
from yagent.tools.shell.result import (
    BackgroundHandle,
    Receipt,
    ShellResult,
    describe_exit,
    shown_output,
)

__all__ = [
    "DEFAULT_TIMEOUT",
    "KILL_GRACE",
    "MAX_SHELL_OUTPUT_BYTES",
    "WAIT_DELAY",
    "BackgroundHandle",
    "LiveGroup",
    "Receipt",
    "ShellResult",
    "SpawnError",
    "kill_live_process_groups",
    "live_groups",
    "run_background",
    "run_foreground",
]

# Seams: read at call time, so tests (and hosts) patch them here.
MAX_SHELL_OUTPUT_BYTES = 2 * 1024 * 1024
"""Bytes of a run's output kept in memory: its first and its last half (the rest is counted)."""
WAIT_DELAY = 2.0
DEFAULT_TIMEOUT = 180.0
KILL_GRACE = 2.0

_POLL_INTERVAL = 0.05
_BACKGROUND_ADVICE = "start servers, watchers and daemons with is_background=true"


class SpawnError(OSError):
    """The process could not be started (fork or exec failed): no part of the command ran."""


class _Capture(asyncio.SubprocessProtocol):
    """Receives the combined output: keeps its head and its tail, at most `cap` bytes together,
    counts everything, never stops reading."""

    def __init__(self, cap: int) -> None:
        self.head_cap = cap - cap // 2
        self.tail_cap = cap // 2
        self.head = bytearray()
        self.tail = bytearray()  # the last `tail_cap` bytes after the head
        self.total = 0
        self.exited = asyncio.Event()
        self.eof = asyncio.Event()

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        self.total += len(data)
        room = self.head_cap - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if not data or not self.tail_cap:
            return
        if len(data) >= self.tail_cap:
            self.tail[:] = data[-self.tail_cap :]
            return
        over = len(self.tail) + len(data) - self.tail_cap
        if over > 0:
            del self.tail[:over]  # bytearray drops its front without moving the rest
        self.tail += data

    def held(self) -> int:
        """Bytes of output held (at most the cap: module contract)."""
        return len(self.head) + len(self.tail)

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        self.eof.set()

    def process_exited(self) -> None:
        self.exited.set()


class _ForegroundRun:
    """One foreground run's state between spawn and result."""

    def __init__(
        self,
        transport: asyncio.SubprocessTransport,
        capture: _Capture,
        started: float,
        timeout: float,
        supervision: Supervision | None = None,
    ) -> None:
        self.supervision = supervision
        self.breach = ""
        self.transport = transport
        self.capture = capture
        self.pgid = transport.get_pid()
        self.started = started
        self.timeout = timeout
        self.group_killed = False

    async def supervise(self, on_cancelled: Callable[[ShellResult], object] | None) -> ShellResult:
        try:
            with anyio.move_on_after(self.timeout):
                await self.wait_exit()
            if self.breach:
                await self.kill_group()
                await self.await_eof()
                return self.result(Receipt.LIMIT, None, "", limit=self.breach)
            if not self.capture.exited.is_set():
                await self.kill_group()
                await self.await_eof()
                return self.timed_out()
            await self.await_eof()
            return self.finished()
        except anyio.get_cancelled_exc_class():
            elapsed = time.monotonic() - self.started
            if not self.capture.exited.is_set():
                await self.kill_group()
            if on_cancelled is not None:
                on_cancelled(self.cancelled(elapsed))
            raise

    async def wait_exit(self) -> None:
        """Until bash exits, or a limit is breached (`self.breach` then says which)."""
        if self.supervision is None:
            await self.capture.exited.wait()
            return
        while not self.capture.exited.is_set():
            with anyio.move_on_after(self.supervision.interval):
                await self.capture.exited.wait()
            if not self.capture.exited.is_set():
                self.breach = self.supervision.breach() or ""
                if self.breach:
                    return

    async def await_eof(self) -> None:
        with anyio.move_on_after(WAIT_DELAY):
            await self.capture.eof.wait()

    async def kill_group(self) -> None:
        """SIGTERM the group, SIGKILL what is left after KILL_GRACE; shielded, so a cancellation
        arriving meanwhile cannot leave the group half-killed."""
        with anyio.CancelScope(shield=True):
            self.group_killed = True
            signal_group(self.pgid, signal.SIGTERM)
            with anyio.move_on_after(KILL_GRACE):
                # Nothing notifies the death of a group's last member: poll.
                while group_alive(self.pgid):  # noqa: ASYNC110
                    await anyio.sleep(_POLL_INTERVAL)
            # Unconditional: a member procfs did not show us (or one that ignores SIGTERM) must
            # not outlive the run; signalling leftover zombies is harmless.
            signal_group(self.pgid, signal.SIGKILL)
            with anyio.move_on_after(KILL_GRACE):
                await self.capture.exited.wait()

    def finished(self) -> ShellResult:
        code = self.transport.get_returncode()
        if not self.capture.eof.is_set():
            note = (
                f"the command exited, but a process it started in the background kept its output "
                f"open; reading stopped {WAIT_DELAY:g}s after the exit and later output was not "
                f"captured; {_BACKGROUND_ADVICE}"
            )
            return self.result(Receipt.PIPES_HELD, code, note)
        if self.supervision is not None:
            said = (self.capture.head + self.capture.tail).decode("utf-8", errors="replace")
            limit = self.supervision.explain(code, said)
            if limit:
                return self.result(Receipt.LIMIT, code, "", limit=limit)
        if code == 0:
            return self.result(Receipt.SUCCESS, code, "")
        return self.result(Receipt.EXIT_NONZERO, code, "")

    def timed_out(self) -> ShellResult:
        note = (
            f"the command was still running after the {self.timeout:g}s timeout, so it and every "
            f"process it started (its process group) were killed; {_BACKGROUND_ADVICE}, otherwise "
            "give a longer timeout or split the work"
        )
        return self.result(Receipt.TIMEOUT, None, note + self.escaped_note())

    def cancelled(self, elapsed: float) -> ShellResult:
        if self.group_killed:
            note = (
                f"the run was cancelled by the caller after {elapsed:.1f}s, not by its timeout; "
                "the command and every process it started (its process group) were killed"
            )
            return self.result(Receipt.CANCELLED, None, note + self.escaped_note())
        code = self.transport.get_returncode()
        note = (
            f"the run was cancelled by the caller after the command had exited "
            f"({describe_exit(code)}) while a background process still held its output open; "
            "nothing was killed"
        )
        return self.result(Receipt.CANCELLED, code, note)

    def escaped_note(self) -> str:
        if self.capture.eof.is_set():
            return ""
        return "; a process that left the group (setsid) still holds the output open"

    def result(
        self, receipt: Receipt, exit_code: int | None, note: str, *, limit: str = ""
    ) -> ShellResult:
        shown = shown_output(bytes(self.capture.head), bytes(self.capture.tail), self.capture.total)
        return ShellResult(
            receipt=receipt,
            exit_code=exit_code,
            output=shown.text,
            truncated=self.capture.total > shown.shown_bytes,
            total_bytes=self.capture.total,
            duration=time.monotonic() - self.started,
            note=note,
            shown_bytes=shown.shown_bytes,
            limit=limit,
            binary=shown.binary,
        )


async def run_foreground(
    command: str,
    *,
    cwd: Path,
    # The tool's own parameter: it produces the TIMEOUT receipt and kills the group, which an
    # enclosing fail_after could not tell apart from any other cancellation.
    timeout: float | None = None,  # noqa: ASYNC109
    env: Mapping[str, str] | None = None,
    on_cancelled: Callable[[ShellResult], object] | None = None,
    launcher: Callable[[list[str]], list[str]] | None = None,
    supervision: Supervision | None = None,
) -> ShellResult:
    """Run `command` with `bash -c` in `cwd` and wait for it, boundedly (see the module contract).

    `timeout` defaults to DEFAULT_TIMEOUT; `env`, when given, is the whole environment (as in
    `subprocess`), otherwise the current one is inherited. stdin is /dev/null. On cancellation,
    `on_cancelled` (which must not raise: it runs while the cancellation is in flight) receives
    the CANCELLED result before the cancellation is re-raised.
    """
    limit = DEFAULT_TIMEOUT if timeout is None else timeout
    if limit <= 0:
        raise ValueError(f"timeout must be positive, got {limit!r}")
    cap = MAX_SHELL_OUTPUT_BYTES
    loop = asyncio.get_running_loop()
    started = time.monotonic()
    argv = _argv(command, launcher)
    try:
        transport, capture = await loop.subprocess_exec(
            lambda: _Capture(cap),
            *argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            cwd=cwd,
            env=None if env is None else dict(env),
            start_new_session=True,
        )
    except OSError as exc:
        raise SpawnError(exc.errno, exc.strerror or str(exc)) from exc
    run = _ForegroundRun(transport, capture, started, limit, supervision)
    register(LiveGroup(run.pgid, command, started))
    try:
        return await run.supervise(on_cancelled)
    finally:
        unregister(run.pgid)
        if not capture.exited.is_set():
            # Only reachable through an unexpected error: the group must not outlive the run.
            signal_group(run.pgid, signal.SIGKILL)
        # Closes our end of a pipe a descendant may still hold (the WAIT_DELAY contract).
        transport.close()


async def run_background(
    command: str,
    *,
    cwd: Path,
    log_path: Path,
    env: Mapping[str, str] | None = None,
    launcher: Callable[[list[str]], list[str]] | None = None,
) -> BackgroundHandle:
    """Start `command` with `bash -c` in its own session, output appended to `log_path`, and
    return at once. The run is not registered and is never signalled by this module."""
    argv = _argv(command, launcher)
    if launcher is not None:
        # A sandbox launcher may tie its life to its parent (bwrap --die-with-parent: the kernel's
        # parent-death signal follows the forking *thread*): fork from this long-lived thread, not
        # from a worker thread that may exit while the run goes on.
        return _spawn_background(argv, cwd, log_path, env)
    return await anyio.to_thread.run_sync(_spawn_background, argv, cwd, log_path, env)


def _argv(command: str, launcher: Callable[[list[str]], list[str]] | None) -> list[str]:
    argv = ["bash", "-c", command]
    return argv if launcher is None else launcher(argv)


def _spawn_background(
    argv: list[str], cwd: Path, log_path: Path, env: Mapping[str, str] | None
) -> BackgroundHandle:
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "ab") as log:
        try:
            process = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=cwd,
                env=None if env is None else dict(env),
                start_new_session=True,
            )
        except OSError as exc:
            raise SpawnError(exc.errno, exc.strerror or str(exc)) from exc
    # Reap it when it ends, so a finished background run leaves no zombie behind.
    threading.Thread(
        target=process.wait, name=f"run_background-reaper-{process.pid}", daemon=True
    ).start()
    return BackgroundHandle(pid=process.pid, pgid=process.pid, log_path=log_path)
