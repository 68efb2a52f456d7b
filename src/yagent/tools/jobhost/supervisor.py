"""The session sandbox's supervisor: runs INSIDE the session's one bubblewrap sandbox.

`serve(fd)` accepts connections on the listening unix socket it inherited as fd N (its path is in
a host directory every sandbox masks; fd N is never passed on). A `run` starts `bash -c …` in its
own session with the caller's stdin, environment and cwd, marked `YAGENT_RUN=<n>` so what it
starts is found even after `setsid`; its output is relayed to the caller's fd while it runs, then
— when it exits leaving processes running (`cmd &`), or when started as a job — to a log fd the
host opened, at most `LOG_CAP` bytes (one line says when the rest was dropped). Such processes
form a *job*: listed (`list`, with the exit status of the job's command when it has one), stopped
(`stop`: SIGTERM to its group and every marked process, SIGKILL after `STOP_GRACE`). A job is
listed as running until its command has exited, none of its marked processes is left and its
output has reached its end — all of it is then in its log, so how it ended can be read there. A
process that shed the job's mark and group may hold the output open for ever: the job then counts
as ended `drain` seconds (the request's, else `wire.JOB_DRAIN`) after the first listing that found
nothing else of it, and says so (`output_open`); what that process writes still goes to the log.

A caller's `signal` request (its timeout, a limit breach, a cancellation: how a host ends a run)
or its hang-up while the command runs *ends* the run: SIGTERM to its group and marked processes,
then SIGKILL after `END_GRACE` round after round until nothing is left (a process forked while
the last was signalled is caught by the next round; `END_TIMEOUT` bounds it); the exit is sent
only then, so the caller's command ends after its processes. An ended run never becomes a job.

The supervisor holds the socket yagent reaches the sandbox through, among the programs it starts
and with their user: it makes itself not dumpable before it serves, so none of them can attach
to it (ptrace), take its socket (`pidfd_getfd`) or write its memory, and answer yagent in its
place; a kernel that refuses that leaves no supervisor. (yagent trusts no answer anyway beyond
what it can check: `tools.jobs` reads only the logs it handed out.)

At the sandbox's process limit no thread can start: a connection is then served inline — `list`
and `stop` answered, `run` refused with a line saying why (`AT_LIMIT`) — and the supervisor
itself goes on. It judges nothing: all it starts is inside the sandbox the host built, which
already bounds any program.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import socket
import subprocess
import threading
import time
from typing import Any

from yagent.tools.jobhost.wire import JOB_DRAIN, LOG_CAP, MARK, Reader, close, send, try_send

PR_SET_DUMPABLE = 4
STOP_GRACE = 2.0
LEFT_GRACE = 0.2
"""How long after its command exits a run's output pipe may stay open before its holder counts
as left running (a descendant finishing its last write is not a job)."""
END_GRACE = 1.0
"""SIGTERM to SIGKILL when a run is ended: below the shell engine's own `KILL_GRACE`, so the
caller hears the exit before it would kill its end."""
END_TIMEOUT = 5.0
AT_LIMIT = (
    "the session sandbox is at its process limit: nothing new can start in it until some of its "
    "processes end (list_jobs shows the jobs, stop_job stops one)"
)
_FULL = f"\n[job log full at {LOG_CAP} bytes: later output is not kept]\n"
_CHUNK = 65536


def _marked(run: int) -> set[int]:
    """Live (non-zombie) processes whose environment carries this run's mark, or its group."""
    needle = f"{MARK}={run}".encode()
    found: set[int] = set()
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
            with open(f"/proc/{name}/environ", "rb") as f:
                environ = f.read().split(b"\0")
        except (OSError, IndexError):
            continue
        if fields[0] in (b"Z", b"X"):
            continue
        if needle in environ or int(fields[2]) == _RUNS.get(run, -1):
            found.add(int(name))
    return found


_RUNS: dict[int, int] = {}  # run number -> its process group
_ENDED: set[int] = set()  # runs their caller ended: never a job


class Job:
    def __init__(self, run: int, command: str, pid: int, relay: Relay, drain: float) -> None:
        self.run, self.command, self.pid = run, command, pid
        self.relay, self.drain = relay, drain
        self.exit_code: int | None = None
        self.reaped = False  # its command's exit is known (or it had exited before the job was)
        self.stopped = False
        self.log = ""
        self.quiet_since: float | None = None

    def view(self) -> dict[str, Any]:
        pids = sorted(_marked(self.run))
        over = not pids and (self.stopped or self._drained())
        return {
            "id": self.run,
            "command": self.command,
            "pid": self.pid,
            "pids": pids,
            "running": not over,
            "exit_code": self.exit_code,
            "stopped": self.stopped,
            "output_open": over and not self.stopped and not self.relay.eof.is_set(),
            "log": self.log,
        }

    def _drained(self) -> bool:
        """Nothing of the job is left but its output: ended once that output reached its end,
        or `drain` seconds after this was first seen (see the module contract)."""
        if not self.reaped:
            return False
        if self.relay.eof.is_set():
            return True
        now = time.monotonic()
        if self.quiet_since is None:
            self.quiet_since = now
        return now - self.quiet_since >= self.drain


class Relay:
    """Copies a run's output pipe to the caller, then (detached) to the job's log, capped."""

    def __init__(self, read_fd: int, out_fd: int | None) -> None:
        self.read_fd = read_fd
        self.out_fd = out_fd
        self.log_fd: int | None = None
        self.logged = 0
        self.lock = threading.Lock()
        self.eof = threading.Event()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        while data := _read(self.read_fd):
            with self.lock:
                if self.out_fd is not None:
                    try:
                        os.write(self.out_fd, data)
                        continue
                    except OSError:
                        self._close_out()
                self._log(data)
        os.close(self.read_fd)
        with self.lock:
            self._close_out()
            if self.log_fd is not None:  # the log is the host's file: our fd ends here
                close(self.log_fd)
                self.log_fd = None
            self.eof.set()

    def _log(self, data: bytes) -> None:
        kept = data[: max(LOG_CAP - self.logged, 0)] if self.log_fd is not None else b""
        if kept and self.log_fd is not None:
            with contextlib.suppress(OSError):
                os.write(self.log_fd, kept)
                self.logged += len(kept)
                if self.logged >= LOG_CAP:
                    os.write(self.log_fd, _FULL.encode())

    def _close_out(self) -> None:
        if self.out_fd is not None:
            os.close(self.out_fd)
            self.out_fd = None

    def detach(self, log_fd: int | None) -> None:
        """From now on, output goes to `log_fd` (None: counted and dropped)."""
        with self.lock:
            self._close_out()
            if self.eof.is_set() and log_fd is not None:
                close(log_fd)
            else:
                self.log_fd = log_fd


def _read(fd: int) -> bytes:
    try:
        return os.read(fd, _CHUNK)
    except OSError:
        return b""


class Supervisor:
    def __init__(self, listener: socket.socket) -> None:
        self.listener = listener
        self.jobs: dict[int, Job] = {}
        self.next_run = 1
        self.lock = threading.Lock()
        self.log_paths: dict[int, str] = {}

    def serve(self) -> None:
        while True:
            conn, _ = self.listener.accept()
            try:
                threading.Thread(target=self._session, args=(conn,), daemon=True).start()
            except RuntimeError:  # the process limit: no thread can start
                self._session(conn, inline=True)

    def _session(self, conn: socket.socket, inline: bool = False) -> None:
        with conn:
            reader = Reader(conn)
            try:
                request = reader.next()
                if request is None:
                    return
                op = request.get("op")
                if op == "run" and inline:
                    send(conn, {"error": AT_LIMIT})
                elif op == "run":
                    self._run(conn, reader, request)
                elif op == "list":
                    send(conn, {"jobs": [j.view() for j in list(self.jobs.values())]})
                elif op == "stop":
                    send(conn, self._stop(int(request.get("id", 0))))
                else:
                    send(conn, {"error": f"unknown op {op!r}"})
            except (OSError, ValueError, RuntimeError) as exc:
                try_send(conn, {"error": AT_LIMIT if isinstance(exc, RuntimeError) else str(exc)})
            finally:
                for fd in reader.fds:
                    close(fd)
                reader.fds.clear()

    def _run(self, conn: socket.socket, reader: Reader, request: dict[str, Any]) -> None:
        fds = list(reader.fds)
        reader.fds.clear()
        as_job = bool(request.get("job"))
        drain = float(request.get("drain", JOB_DRAIN))
        stdin_fd, out_fd = fds[0], fds[1]  # a job's "out" is its log
        with self.lock:
            run = self.next_run
            self.next_run += 1
        env = {str(k): str(v) for k, v in dict(request.get("env") or {}).items()}
        env[MARK] = str(run)
        argv = [str(a) for a in request["argv"]]
        read_fd, write_fd = os.pipe()
        try:
            relay = Relay(read_fd, None if as_job else out_fd)  # its thread first: nothing runs yet
            if as_job:
                relay.detach(out_fd)  # a job's output goes to its log from the first byte
        except RuntimeError:
            for fd in (read_fd, write_fd, stdin_fd, out_fd):
                close(fd)
            raise
        try:
            process = subprocess.Popen(
                argv,
                stdin=stdin_fd,
                stdout=write_fd,
                stderr=write_fd,
                cwd=str(request.get("cwd") or "/"),
                env=env,
                start_new_session=True,
            )
        except OSError as exc:  # the relay, seeing the end of the pipe, closes its ends
            close(stdin_fd)
            send(conn, {"error": f"cannot start: {exc}"})
            return
        finally:
            close(write_fd)
        close(stdin_fd)
        _RUNS[run] = process.pid
        shell_line = len(argv) == 3 and argv[:2] == ["bash", "-c"]
        command = str(request.get("command") or (argv[2] if shell_line else " ".join(argv)))
        if as_job:
            job = self.jobs[run] = Job(run, command, process.pid, relay, drain)
            job.log = str(request.get("log") or "")
            send(conn, {"started": process.pid, "job": run})
            job.exit_code = process.wait()
            job.reaped = True  # still running while its output drains (`Job.view`)
            return
        send(conn, {"started": process.pid})
        watcher = threading.Thread(target=self._watch, args=(conn, reader, run), daemon=True)
        try:
            watcher.start()
        except RuntimeError:
            _ENDED.add(run)
            _end_run(run, 0)
            raise
        code = process.wait()
        relay.eof.wait(LEFT_GRACE)
        job_id = None
        if run in _ENDED:
            _end_run(run, END_GRACE)  # with the watcher: the exit goes out when nothing is left
        elif (left := _marked(run)) or not relay.eof.is_set():
            job_id = run
            job = self.jobs[run] = Job(
                run, command, min(left) if left else process.pid, relay, drain
            )
            job.reaped = True
            log_fd = self._ask_log(conn, reader, run)
            job.log = self.log_paths.pop(run, "")
            relay.detach(log_fd)
        else:
            relay.eof.wait()
        try_send(conn, {"exit": code, "job": job_id})

    def _ask_log(self, conn: socket.socket, reader: Reader, run: int) -> int | None:
        if not try_send(conn, {"log": True}):
            return None
        deadline = time.monotonic() + STOP_GRACE
        while time.monotonic() < deadline:
            if reader.fds and run in self.log_paths:
                return reader.fds.pop(0)
            time.sleep(0.01)
        return None

    def _watch(self, conn: socket.socket, reader: Reader, run: int) -> None:
        """The caller's requests while its command runs; a hang-up kills the whole run."""
        try:
            while (message := reader.next()) is not None:
                if "signal" in message:
                    _ENDED.add(run)
                    _signal_run(run, int(message["signal"]))
                    _end_run(run, END_GRACE)
                elif "log" in message:
                    self.log_paths[run] = str(message["log"])
        except (OSError, ValueError):
            pass
        if run not in self.jobs:
            _ENDED.add(run)
            _end_run(run, 0)

    def _stop(self, job_id: int) -> dict[str, Any]:
        job = self.jobs.get(job_id)
        if job is None:
            return {"error": f"no job {job_id}"}
        job.stopped = True
        _signal_run(job_id, signal.SIGTERM)
        killed = _end_run(job_id, STOP_GRACE)
        return {"job": job.view(), "killed": sorted(killed)}


def _signal_run(run: int, signum: int) -> None:
    group = _RUNS.get(run)
    if group is not None:
        with contextlib.suppress(OSError):
            os.killpg(group, signum)
    for pid in _marked(run):
        with contextlib.suppress(OSError):
            os.kill(pid, signum)


def _end_run(run: int, grace: float) -> set[int]:
    """Wait up to `grace` for the run's processes to end, then SIGKILL what is left, round after
    round, until nothing is (or `END_TIMEOUT`); returns the pids that needed SIGKILL."""
    deadline = time.monotonic() + grace
    while (left := _marked(run)) and time.monotonic() < deadline:
        time.sleep(0.02)
    killed = set(left)
    deadline = time.monotonic() + END_TIMEOUT
    while left and time.monotonic() < deadline:
        _signal_run(run, signal.SIGKILL)
        time.sleep(0.005)
        left = _marked(run)
        killed |= left
    return killed


def undumpable() -> None:
    """Make this process one that what it runs cannot attach to: not dumpable, so ptrace,
    `pidfd_getfd` and `/proc/<pid>/mem` need CAP_SYS_PTRACE, which no command has. Raises
    OSError when the kernel refuses (the supervisor then does not serve)."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        code = ctypes.get_errno()
        raise OSError(code, f"prctl(PR_SET_DUMPABLE, 0): {os.strerror(code)}")


def serve(fd: int) -> None:
    """Serve the listening socket `fd` until the sandbox ends (not dumpable: `undumpable`)."""
    listener = socket.socket(fileno=fd)
    os.set_inheritable(listener.fileno(), False)
    undumpable()
    Supervisor(listener).serve()
