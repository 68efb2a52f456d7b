"""The supervisor's wire: one JSON object per line over a unix stream socket, fds alongside
(`SCM_RIGHTS`). `Reader.next()` is None at the end of the stream; a line that is not a JSON object
reads as `{}`; fds that came along collect in `Reader.fds` for the caller to take or close."""

from __future__ import annotations

import contextlib
import json
import os
import socket
from typing import Any

LOG_CAP = 8 * 1024 * 1024
"""Bytes of a job's output kept in its log."""
MARK = "YAGENT_RUN"
"""The environment variable marking every process of one run (`YAGENT_RUN=<n>`)."""
JOB_DRAIN = 2.0
"""Seconds a job whose processes have all ended is still listed as running while its output is
held open (by a process that shed the job's mark and group): its last output reaches its log
first. A run request's `drain` overrides it (a seam for the host)."""
SETUP_FAILED = 125
_CHUNK = 65536


def send(sock: socket.socket, message: dict[str, Any], fds: list[int] | None = None) -> None:
    data = (json.dumps(message) + "\n").encode()
    if fds:
        socket.send_fds(sock, [data], fds)
    else:
        sock.sendall(data)


def try_send(sock: socket.socket, message: dict[str, Any]) -> bool:
    try:
        send(sock, message)
    except OSError:
        return False
    return True


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


def close(fd: int) -> None:
    with contextlib.suppress(OSError):
        os.close(fd)
