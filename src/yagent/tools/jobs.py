"""The session sandbox: one long-lived bubblewrap sandbox per app, where background jobs live.

Guarantees:
- `SessionSandbox` starts, on first use, ONE sandbox through the provider's own launcher (the
  same `BwrapProvider.command` argv a one-shot command gets — same mounts, network, protected
  paths, capabilities, and whatever limits the provider applies), running the supervisor
  (`tools.jobhost serve`). Every command of the session runs in it, foreground and background
  alike, so they share one network namespace (a job's port on the sandbox's loopback is
  reachable from later commands) and one pid namespace (its pids mean the same to later
  commands). The supervisor's socket lies in a private 0700 host directory under `/run/user/<uid>`
  or `/tmp`, both masked inside every sandbox: no sandboxed program can reach it.
- A foreground command runs through `launcher(log)`: a small host process (`jobhost enter`) the
  shell engine spawns, times out and kills as before; killing it kills the command's whole run
  inside the sandbox. A command that exits leaving processes running (`cmd &`, `nohup cmd &`,
  `setsid cmd &`) turns them into a job whose output goes to `log` (bounded:
  `jobhost.wire.LOG_CAP`).
  `start_job` starts an `is_background` command as a job straight away.
- `jobs()` lists every job as `jobstate.Job` (id, pid inside the sandbox, command, running or
  not, exit code when known, the last lines of its log, and how it ended); `stop(id)` sends
  SIGTERM to the job's processes and SIGKILL to what is left after the supervisor's grace. A job
  is ended only once its output reached its log (`jobhost.supervisor`; `start_job` asks for the
  drain limit `wire.JOB_DRAIN`). A foreground command its caller ended (timeout, limit breach,
  cancellation) is ended whole by the supervisor and never becomes a job.
- `close()` ends the sandbox and every job, returning once its pid namespace is empty, with a
  notice naming the jobs it stopped; with `keep` (`[sandbox] keep_background`) leaves it running
  and the notice names the jobs kept, their pids and the host pid that ends them all. Started with
  `--die-with-parent` towards yagent itself unless keep is asked, so a crash does not leave it
  behind either; with keep, a `setsid -w` holder is its parent instead.
- The socket directory holds an `owner` file: yagent's pid (with keep, the holder's). Starting a
  sandbox first removes the directories of owners that are gone and whose socket nobody listens
  on (`sweep_stale`): a yagent killed outright (SIGKILL, the OOM killer) cannot clean up, the
  next one does. Normal ends, SIGINT and SIGTERM remove it through `close`/`close_now`.
- The supervisor shares the sandbox with what it runs, so its answers are the sandbox's word:
  yagent reads on the host only the logs it handed out itself (`launcher`, `start_job`), and a
  job view naming any other path is a `JobError` — never a file opened on the host (a command
  that took the supervisor's socket named `/proc/self/environ`, yagent's own).
Refuses: a supervisor that cannot be reached is a `JobError` (run_bash reports it; nothing falls
back to running outside the sandbox). Leaves to the host: where logs live and when to close.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread

from yagent.tools import jobhost
from yagent.tools.egress.proxyserver import runtime_base
from yagent.tools.jobhost import wire
from yagent.tools.jobstate import Explain, Job

SOCKET_NAME = "jobs.sock"
OWNER_NAME = "owner"  # the pid whose life the directory follows: yagent's, or a kept holder's
PREFIX = "yagent-jobs-"
REPLY_TIMEOUT = 30.0

Wrap = Callable[[Sequence[str]], list[str]]

_LIVE: weakref.WeakSet[SessionSandbox] = weakref.WeakSet()


def close_all_now() -> int:
    """Kill every session sandbox of this process not kept (`close_now`): for a host ending
    abruptly, or a test harness between tests. Returns how many were running."""
    live = [s for s in list(_LIVE) if s.started and not s.keep]
    for session in live:
        session.close_now()
    return len(live)


def sweep_stale(base: Path) -> int:
    """Remove the socket directories yagent processes killed outright (SIGKILL, the OOM killer)
    left in `base`: ours (this uid), whose owner pid is gone and whose socket nobody listens on
    (both, so a directory of another pid namespace sharing `base` is never taken). A directory
    without an owner file is left alone. Returns how many were removed."""
    removed = 0
    try:
        entries = list(base.iterdir())
    except OSError:
        return 0
    for entry in entries:
        if not entry.name.startswith(PREFIX) or not _stale(entry):
            continue
        shutil.rmtree(entry, ignore_errors=True)
        removed += 1
    return removed


def _stale(directory: Path) -> bool:
    try:
        if directory.lstat().st_uid != os.getuid() or directory.is_symlink():
            return False
        pid = int((directory / OWNER_NAME).read_text())
    except (OSError, ValueError):
        return False
    if pid <= 0 or _alive(pid):
        return False
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.connect(str(directory / SOCKET_NAME))
    except OSError:
        return True  # no listener (refused) or no socket: nothing can use it
    finally:
        probe.close()
    return False


class JobError(Exception):
    """The session sandbox could not be started or reached, or refused a request."""


class SessionSandbox:
    """The app's long-lived sandbox and the jobs running in it (see the module contract)."""

    def __init__(
        self,
        wrap: Wrap,
        env: Mapping[str, str],
        workspace: Path,
        *,
        keep: bool = False,
        explain: Explain | None = None,
    ) -> None:
        self._explain = explain
        self._wrap = wrap
        self._env = dict(env)
        self._workspace = workspace
        self._directory: Path | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self._closed = False
        self._logs: set[str] = set()  # the logs handed out: the only ones read on the host
        self.keep = keep
        _LIVE.add(self)

    @property
    def socket_path(self) -> Path:
        if self._directory is None:
            raise JobError("the session sandbox is not started")
        return self._directory / SOCKET_NAME

    @property
    def started(self) -> bool:
        return self._process is not None

    def start(self) -> None:
        """Start the sandbox unless it runs. Call it from the event loop's thread: bwrap's
        `--die-with-parent` follows the thread that forked it, which must outlive the session."""
        if self._closed:
            raise JobError("the session sandbox was closed")
        if self._process is not None:
            if self._process.poll() is None:
                return
            raise JobError(f"the session sandbox exited (code {self._process.returncode})")
        sweep_stale(Path(runtime_base()))
        directory = Path(tempfile.mkdtemp(prefix=PREFIX, dir=runtime_base()))
        (directory / OWNER_NAME).write_text(str(os.getpid()))
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            listener.bind(str(directory / SOCKET_NAME))
            listener.listen(64)
            fd = listener.fileno()
            serve = jobhost.argv("serve", "--fd", str(fd))
            argv = self._wrap(serve)
            if self.keep:  # its parent is a holder that outlives yagent, not yagent's thread
                argv = ["setsid", "-w", *argv]
            process = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                cwd=self._workspace,
                env=self._env,
                pass_fds=(fd,),
                start_new_session=True,
            )
        except OSError as exc:
            shutil.rmtree(directory, ignore_errors=True)
            raise JobError(f"could not start the session sandbox: {exc}") from exc
        finally:
            listener.close()  # the supervisor holds its own copy
        self._process = process
        if self.keep:  # the directory lives as long as the holder, not as yagent
            (directory / OWNER_NAME).write_text(str(process.pid))
        self._directory = directory

    def launcher(self, log: Path) -> Wrap:
        """How the shell engine runs one foreground `argv` in this sandbox; a job it leaves
        behind logs to `log`."""
        self.start()
        log.parent.mkdir(parents=True, exist_ok=True)
        self._logs.add(str(log))
        prefix = jobhost.argv("enter", "--socket", str(self.socket_path), "--log", str(log), "--")
        return lambda argv: [*prefix, *argv]

    async def start_job(
        self, command: str, argv: Sequence[str], *, cwd: Path, env: Mapping[str, str], log: Path
    ) -> Job:
        """Start `argv` as a job (output to `log`) and return it at once."""
        self.start()
        log.parent.mkdir(parents=True, exist_ok=True)
        self._logs.add(str(log))
        message = {"op": "run", "job": True, "argv": list(argv), "env": dict(env)}
        message |= {"cwd": str(cwd), "command": command, "log": str(log), "drain": wire.JOB_DRAIN}
        stdin = os.open(os.devnull, os.O_RDONLY)
        out = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            reply = await self._ask(message, [stdin, out])
        finally:
            os.close(stdin)
            os.close(out)
        job_id = int(reply["job"])
        for job in await self.jobs():
            if job.id == job_id:
                return job
        raise JobError(f"job {job_id} started but is not listed")

    async def jobs(self) -> list[Job]:
        """Every job of the session, oldest first (none before the sandbox started)."""
        if self._process is None or self._closed:
            return []
        reply = await self._ask({"op": "list"})
        return [Job.of(self._vouched(view), self._explain) for view in reply.get("jobs", ())]

    async def stop(self, job_id: int) -> tuple[Job, tuple[int, ...]]:
        """Stop job `job_id`; returns it and the pids that needed SIGKILL."""
        if self._process is None:
            raise JobError(f"no job {job_id}: no background job was started in this session")
        reply = await self._ask({"op": "stop", "id": job_id})
        job = Job.of(self._vouched(reply["job"]), self._explain)
        return job, tuple(int(p) for p in reply.get("killed", ()))

    def _vouched(self, view: Mapping[str, Any]) -> Mapping[str, Any]:
        """`view`, when the log it names is one this session handed out: yagent reads that file
        on the host, so a path only the sandbox vouches for is refused, never opened."""
        log = str(view.get("log") or "")
        if log and log not in self._logs:
            raise JobError(
                f"the session sandbox named a log yagent never gave it ({log!r}): its answer is "
                "refused and nothing was read there"
            )
        return view

    async def close(self) -> str | None:
        """End the session (see the module contract); the notice, or None with no jobs."""
        if self._closed or self._process is None:
            self._closed = True
            return None
        keep = self.keep
        try:
            running = [job for job in await self.jobs() if job.running]
        except JobError as exc:
            running, keep = [], False
            failure = f"; its jobs could not be listed: {exc}"
        else:
            failure = ""
        self._closed = True
        process = self._process
        if keep and running:
            names = "; ".join(f"{job.line()} (log {job.log})" for job in running)
            return (
                f"kept {len(running)} background job(s) running after the session "
                f"([sandbox] keep_background): {names}; they live in a sandbox that "
                f"`kill {process.pid}` ends"
            )
        await anyio.to_thread.run_sync(self._kill, process)
        if self._directory is not None:
            shutil.rmtree(self._directory, ignore_errors=True)
        if not running:
            return f"session sandbox ended{failure}" if failure else None
        names = "; ".join(job.line().replace("[running] ", "") for job in running)
        return f"stopped {len(running)} background job(s) at session end: {names}"

    def close_now(self) -> None:
        """Kill the sandbox without asking it anything (an app closing on an error)."""
        if self._process is not None and not self._closed and not self.keep:
            self._closed = True
            self._kill(self._process)
            if self._directory is not None:
                shutil.rmtree(self._directory, ignore_errors=True)

    @staticmethod
    def _kill(process: subprocess.Popen[bytes]) -> None:
        """SIGKILL bwrap and return once its pid namespace is empty: the namespace's init (bwrap's
        child) dies with its parent, and the kernel lets init finish only after it has killed and
        reaped every other process of the namespace — so waiting for init waits for them all."""
        init = _children(process.pid)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=REPLY_TIMEOUT)
        deadline = time.monotonic() + REPLY_TIMEOUT
        while any(map(_alive, init)) and time.monotonic() < deadline:
            time.sleep(0.01)

    async def _ask(self, message: dict[str, Any], fds: list[int] | None = None) -> dict[str, Any]:
        path = str(self.socket_path)
        reply = await anyio.to_thread.run_sync(_round_trip, path, message, fds)
        if "error" in reply:
            raise JobError(str(reply["error"]))
        return reply


def _round_trip(path: str, message: dict[str, Any], fds: list[int] | None) -> dict[str, Any]:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(REPLY_TIMEOUT)
        try:
            sock.connect(path)
        except OSError as exc:
            raise JobError(f"the session sandbox cannot be reached: {exc}") from exc
        try:
            wire.send(sock, message, fds)
            reply = wire.Reader(sock).next()
        except (OSError, ValueError) as exc:
            raise JobError(f"the session sandbox did not answer: {exc}") from exc
    if reply is None:
        raise JobError("the session sandbox hung up without an answer")
    return reply


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children", encoding="ascii") as f:
            return [int(word) for word in f.read().split()]
    except (OSError, ValueError):
        return []


def _alive(pid: int) -> bool:
    """Whether `pid` is a process that has not finished exiting (not a zombie, not gone)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] not in (b"Z", b"X")
    except (OSError, IndexError):
        return False
