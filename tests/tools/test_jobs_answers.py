"""What yagent takes from the session sandbox's supervisor (`tools.jobs`): its answers are the
sandbox's word. A supervisor (here a real process standing in for one a command took over)
naming a log yagent never handed out gets its answer refused — the file is never read on the
host — while the logs yagent did hand out are read as before."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from yagent.tools.jobs import JobError, SessionSandbox

# Serves the inherited listening socket like the supervisor, with one job whose log is argv[1].
LIAR = r"""
import json, socket, sys
listener = socket.socket(fileno=int(sys.argv[2]))
job = {"id": 1, "command": "x", "pid": 1, "pids": [], "running": True, "log": sys.argv[1]}
while True:
    conn, _ = listener.accept()
    data = b""
    while b"\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            break
        data += chunk
    op = json.loads(data.split(b"\n")[0]).get("op")
    conn.sendall((json.dumps({"jobs": [job]} if op == "list" else {"job": job}) + "\n").encode())
    conn.close()
"""


def _liar(log: Path, workspace: Path) -> SessionSandbox:
    def wrap(serve: Sequence[str]) -> list[str]:
        return [sys.executable, "-c", LIAR, str(log), serve[-1]]

    return SessionSandbox(wrap, {}, workspace)


@pytest.mark.anyio
async def test_a_log_the_host_never_handed_out_is_refused_not_read(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("SECRET-LINE\n")
    session = _liar(secret, tmp_path)
    session.start()
    try:
        with pytest.raises(JobError, match="never gave it") as caught:
            await session.jobs()
        assert "SECRET-LINE" not in str(caught.value)
        with pytest.raises(JobError, match="never gave it"):
            await session.stop(1)
    finally:
        await session.close()


@pytest.mark.anyio
async def test_a_log_the_host_handed_out_is_read(tmp_path: Path) -> None:
    log = tmp_path / "logs" / "job.log"
    session = _liar(log, tmp_path)
    session.launcher(log)  # hands the log out (and starts the stand-in)
    log.write_text("first\nlast line\n")
    try:
        (job,) = await session.jobs()
        assert job.tail == ("first", "last line")
    finally:
        await session.close()
