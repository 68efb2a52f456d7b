"""The session sandbox's supervisor, and the client a foreground command runs through.

`python -I jobhost.py serve --fd N` runs INSIDE the session's one bubblewrap sandbox (started by
`tools.jobs`): it accepts connections on the listening unix socket it inherited as fd N (the
socket's path lives in a host directory the sandbox masks, so no sandboxed program can reach it,
and fd N is never passed on) and, for each `run` request, starts `bash -c …` in its own session
with the caller's stdin, environment and working directory, marked `YAGENT_RUN=<n>` so that what
it starts can be found even after `setsid`. Its output (stdout and stderr) goes to a pipe the
supervisor relays: to the caller's fd while the command runs, then — when the command exited but
left processes running (`cmd &`, `nohup cmd &`) or when it was started as a job — to a log fd the
host opened, at most `LOG_CAP` bytes (past the cap the bytes are counted, not written, and one
line says so). Such processes form a *job*: listed (`list`), stopped (`stop`: SIGTERM to its
process group and every marked process, SIGKILL after `STOP_GRACE`).
A caller's `signal` request signals the run's group and marked processes; a caller that hangs up
while its command still runs gets the whole run killed (the foreground contract: nothing of a
killed run survives). The supervisor judges nothing: everything it starts is inside the same
sandbox the host built, which already bounds what any program there can do.

`python -I jobhost.py enter --socket PATH --log PATH -- ARGV…` runs on the HOST as the foreground
command the shell engine spawns: it hands its stdin and stdout to the supervisor, forwards
SIGTERM/SIGINT/SIGHUP, opens the log only if the command leaves a job behind, and exits with the
command's exit code (128 + N for a signal N). Exit 125 (a line on stderr) when the supervisor
cannot be reached or goes away. Standard library only, so it starts fast and nothing from the
workspace can be imported ahead of it (`-I`).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from typing import Any

LOG_CAP = 8 * 1024 * 1024
STOP_GRACE = 2.0
LEFT_GRACE = 0.2
"""How long after its command exits a run's output pipe may stay open before its holder counts
as left running (a descendant finishing its last write is not a job)."""
SETUP_FAILED = 125
MARK = "YAGENT_RUN"
_CHUNK = 65536
_FULL = f"\n[job log full at {LOG_CAP} bytes: later output is not kept]\n"


# -- wire ---------------------------------------------------------------------------------------
def send(sock: socket.socket, message: dict[str, Any], fds: list[int] | None = None) -> None:
    data = (json.dumps(message) + "\n").encode()
    if fds:
        socket.send_fds(sock, [data], fds)
    else:
        sock.sendall(data)


class Reader:
    """JSON lines from a stream socket, with the fds that came along."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buffer = b""
        self.fds: list[int] = []

    def next(self) -> dict[str, Any] | None:
        while b"\n" not in self.buffer:
            data, fds, _flags, _addr = socket.recv_fds(self.sock, _CHUNK, 8)
            self.fds += fds
            if not data:
                return None
            self.buffer += data
        line, _, self.buffer = self.buffer.partition(b"\n")
        value = json.loads(line)
        return value if isinstance(value, dict) else {}


# -- the supervisor -----------------------------------------------------------------------------
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


class Job:
    def __init__(self, run: int, command: str, pid: int, started: float) -> None:
        self.run = run
        self.command = command
        self.pid = pid
        self.started = started
        self.exit_code: int | None = None
        self.stopped = False
        self.log = ""

    def view(self) -> dict[str, Any]:
        pids = sorted(_marked(self.run))
        return {
            "id": self.run,
            "command": self.command,
            "pid": self.pid,
            "pids": pids,
            "running": bool(pids),
            "exit_code": self.exit_code,
            "stopped": self.stopped,
            "started": self.started,
            "log": self.log,
        }


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
            threading.Thread(target=self._session, args=(conn,), daemon=True).start()

    def _session(self, conn: socket.socket) -> None:
        with conn:
            reader = Reader(conn)
            try:
                request = reader.next()
                if request is None:
                    return
                op = request.get("op")
                if op == "run":
                    self._run(conn, reader, request)
                elif op == "list":
                    send(conn, {"jobs": [j.view() for j in list(self.jobs.values())]})
                elif op == "stop":
                    send(conn, self._stop(int(request.get("id", 0))))
                else:
                    send(conn, {"error": f"unknown op {op!r}"})
            except (OSError, ValueError) as exc:
                _try_send(conn, {"error": str(exc)})
            finally:
                for fd in reader.fds:
                    _close(fd)
                reader.fds.clear()

    def _run(self, conn: socket.socket, reader: Reader, request: dict[str, Any]) -> None:
        fds = list(reader.fds)
        reader.fds.clear()
        as_job = bool(request.get("job"))
        stdin_fd, out_fd = fds[0], fds[1]  # a job's "out" is its log
        with self.lock:
            run = self.next_run
            self.next_run += 1
        env = {str(k): str(v) for k, v in dict(request.get("env") or {}).items()}
        env[MARK] = str(run)
        read_fd, write_fd = os.pipe()
        try:
            process = subprocess.Popen(
                [str(a) for a in request["argv"]],
                stdin=stdin_fd,
                stdout=write_fd,
                stderr=write_fd,
                cwd=str(request.get("cwd") or "/"),
                env=env,
                start_new_session=True,
            )
        except OSError as exc:
            for fd in (read_fd, write_fd, stdin_fd, out_fd):
                _close(fd)
            send(conn, {"error": f"cannot start: {exc}"})
            return
        finally:
            _close(write_fd)
        _close(stdin_fd)
        _RUNS[run] = process.pid
        argv = [str(a) for a in request["argv"]]
        shell_line = len(argv) == 3 and argv[:2] == ["bash", "-c"]
        command = str(request.get("command") or (argv[2] if shell_line else " ".join(argv)))
        relay = Relay(read_fd, None if as_job else out_fd)
        if as_job:
            relay.detach(out_fd)
            job = self.jobs[run] = Job(run, command, process.pid, time.time())
            job.log = str(request.get("log") or "")
            send(conn, {"started": process.pid, "job": run})
            job.exit_code = process.wait()
            return
        send(conn, {"started": process.pid})
        watcher = threading.Thread(target=self._watch, args=(conn, reader, run), daemon=True)
        watcher.start()
        code = process.wait()
        relay.eof.wait(LEFT_GRACE)
        left = _marked(run)
        job_id = None
        if left or not relay.eof.is_set():
            job_id = run
            job = self.jobs[run] = Job(
                run, command, min(left) if left else process.pid, time.time()
            )
            log_fd = self._ask_log(conn, reader, run)
            job.log = self.log_paths.pop(run, "")
            relay.detach(log_fd)
        else:
            relay.eof.wait()
        _try_send(conn, {"exit": code, "job": job_id})

    def _ask_log(self, conn: socket.socket, reader: Reader, run: int) -> int | None:
        if not _try_send(conn, {"log": True}):
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
                    _signal_run(run, int(message["signal"]))
                elif "log" in message:
                    self.log_paths[run] = str(message["log"])
        except (OSError, ValueError):
            pass
        if run not in self.jobs:
            _signal_run(run, signal.SIGKILL)

    def _stop(self, job_id: int) -> dict[str, Any]:
        job = self.jobs.get(job_id)
        if job is None:
            return {"error": f"no job {job_id}"}
        job.stopped = True
        _signal_run(job_id, signal.SIGTERM)
        deadline = time.monotonic() + STOP_GRACE
        while _marked(job_id) and time.monotonic() < deadline:
            time.sleep(0.02)
        killed = _marked(job_id)
        if killed:
            _signal_run(job_id, signal.SIGKILL)
            deadline = time.monotonic() + STOP_GRACE
            while _marked(job_id) and time.monotonic() < deadline:
                time.sleep(0.02)
        return {"job": job.view(), "killed": sorted(killed)}


def _signal_run(run: int, signum: int) -> None:
    group = _RUNS.get(run)
    if group is not None:
        with contextlib.suppress(OSError):
            os.killpg(group, signum)
    for pid in _marked(run):
        with contextlib.suppress(OSError):
            os.kill(pid, signum)


def _try_send(conn: socket.socket, message: dict[str, Any]) -> bool:
    try:
        send(conn, message)
    except OSError:
        return False
    return True


def _close(fd: int) -> None:
    with contextlib.suppress(OSError):
        os.close(fd)


# -- the host-side client -----------------------------------------------------------------------
def enter(socket_path: str, log_path: str, argv: list[str]) -> int:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(socket_path)
        request = {"op": "run", "argv": argv, "env": dict(os.environ), "cwd": os.getcwd()}
        send(sock, request, [0, 1])
    except OSError as exc:
        return _fail(f"the session sandbox cannot be reached: {exc}")
    reader = Reader(sock)

    def forward(signum: int, _frame: object) -> None:
        _try_send(sock, {"signal": signum})

    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, forward)
    try:
        while (message := reader.next()) is not None:
            if message.get("log"):
                fd = os.open(log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
                send(sock, {"log": log_path}, [fd])
                os.close(fd)
            elif "exit" in message:
                code = int(message["exit"])
                return 128 - code if code < 0 else code
            elif "error" in message:
                return _fail(str(message["error"]))
    except (OSError, ValueError) as exc:
        return _fail(f"lost the session sandbox: {exc}")
    return _fail("the session sandbox went away while the command ran")


def _fail(why: str) -> int:
    sys.stderr.write(f"yagent jobhost: {why}\n")
    return SETUP_FAILED


def main(argv: list[str]) -> int:
    if len(argv) == 3 and argv[0] == "serve" and argv[1] == "--fd":
        listener = socket.socket(fileno=int(argv[2]))
        os.set_inheritable(listener.fileno(), False)
        Supervisor(listener).serve()
        return 0
    shape = [argv[i] if i < len(argv) else "" for i in (0, 1, 3, 5)]
    if len(argv) > 6 and shape == ["enter", "--socket", "--log", "--"]:
        return enter(argv[2], argv[4], argv[6:])
    return _fail("usage: jobhost.py serve --fd N | enter --socket PATH --log PATH -- ARGV...")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
