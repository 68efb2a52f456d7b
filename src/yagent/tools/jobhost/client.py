"""The client a foreground command of the session sandbox runs through, on the HOST.

`enter(socket, log, argv)` is the process the shell engine spawns, times out and kills: it hands
its stdin and stdout to the supervisor with a `run` request, forwards SIGTERM/SIGINT/SIGHUP as
`signal` requests (the supervisor then ends the whole run, and answers only when nothing of it is
left), opens `log` only if the command leaves a job, and returns the command's exit code (128 + N
for signal N). Returns 125 (`wire.SETUP_FAILED`, a line on stderr) when the supervisor cannot be
reached, refuses the run, or goes away.
"""

from __future__ import annotations

import os
import signal
import socket
import sys

from yagent.tools.jobhost.wire import SETUP_FAILED, Reader, send, try_send


def enter(socket_path: str, log_path: str, argv: list[str]) -> int:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(socket_path)
        request = {"op": "run", "argv": argv, "env": dict(os.environ), "cwd": os.getcwd()}
        send(sock, request, [0, 1])
    except OSError as exc:
        return fail(f"the session sandbox cannot be reached: {exc}")
    reader = Reader(sock)

    def forward(signum: int, _frame: object) -> None:
        try_send(sock, {"signal": signum})

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
                return fail(str(message["error"]))
    except (OSError, ValueError) as exc:
        return fail(f"lost the session sandbox: {exc}")
    return fail("the session sandbox went away while the command ran")


def fail(why: str) -> int:
    sys.stderr.write(f"yagent jobhost: {why}\n")
    return SETUP_FAILED
