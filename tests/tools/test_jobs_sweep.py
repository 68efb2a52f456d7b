"""`sweep_stale`: socket directories of yagent processes killed outright are removed by the next
one — only ours, only when the owner is gone and nobody listens on the socket."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

from yagent.tools.jobs import OWNER_NAME, PREFIX, SOCKET_NAME, sweep_stale


def dead_pid() -> int:
    done = subprocess.Popen([sys.executable, "-c", "pass"])
    done.wait()
    return done.pid


def made(base: Path, name: str, owner: int | None, *, sock: bool = False) -> Path:
    directory = base / name
    directory.mkdir(mode=0o700)
    if owner is not None:
        (directory / OWNER_NAME).write_text(str(owner))
    if sock:  # a socket file nobody listens on any more
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind(str(directory / SOCKET_NAME))
        s.close()
    return directory


def test_only_dead_unlistened_directories_of_ours_are_removed(tmp_path: Path) -> None:
    gone = dead_pid()
    dead_with_socket = made(tmp_path, f"{PREFIX}a", gone, sock=True)
    dead_no_socket = made(tmp_path, f"{PREFIX}b", gone)
    living = made(tmp_path, f"{PREFIX}c", os.getpid(), sock=True)
    no_owner = made(tmp_path, f"{PREFIX}d", None, sock=True)
    garbled = made(tmp_path, f"{PREFIX}e", None)
    (garbled / OWNER_NAME).write_text("not a pid")
    other_prefix = made(tmp_path, "yagent-other-f", gone)
    listened = made(tmp_path, f"{PREFIX}g", gone)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(listened / SOCKET_NAME))
    listener.listen(1)  # a pid that looks gone (another pid namespace) but a live listener
    try:
        assert sweep_stale(tmp_path) == 2
    finally:
        listener.close()
    assert not dead_with_socket.exists()
    assert not dead_no_socket.exists()
    for kept in (living, no_owner, garbled, other_prefix, listened):
        assert kept.exists(), kept


def test_a_missing_base_is_nothing_to_sweep(tmp_path: Path) -> None:
    assert sweep_stale(tmp_path / "absent") == 0
