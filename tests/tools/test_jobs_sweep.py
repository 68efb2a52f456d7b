"""`sweep_stale`: socket directories of yagent processes killed outright are removed by the next
one — only ours, only when the owner is gone (or, with no owner file, the directory is old) and
nobody listens on the socket."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

from yagent.tools.jobs import OWNER_NAME, OWNERLESS_AGE, PREFIX, SOCKET_NAME, sweep_stale


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


def aged(directory: Path, seconds: float) -> Path:
    stamp = time.time() - seconds
    os.utime(directory, (stamp, stamp))
    return directory


def test_ownerless_directories_of_older_versions_go_once_old_and_unlistened(
    tmp_path: Path,
) -> None:
    # older versions wrote no owner file: such a directory is judged by its age and its socket
    old = OWNERLESS_AGE + 60
    with_dead_socket = aged(made(tmp_path, f"{PREFIX}a", None, sock=True), old)
    bare = aged(made(tmp_path, f"{PREFIX}b", None), old)
    garbled = made(tmp_path, f"{PREFIX}c", None)
    (garbled / OWNER_NAME).write_text("not a pid")
    aged(garbled, old)
    fresh = made(tmp_path, f"{PREFIX}d", None, sock=True)  # being made, or just made
    listened = made(tmp_path, f"{PREFIX}e", None)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(listened / SOCKET_NAME))
    listener.listen(1)  # an older yagent still running its sandbox
    aged(listened, old)
    other_prefix = aged(made(tmp_path, "yagent-other-f", None), old)
    try:
        assert sweep_stale(tmp_path) == 3
    finally:
        listener.close()
    for gone in (with_dead_socket, bare, garbled):
        assert not gone.exists(), gone
    for kept in (fresh, listened, other_prefix):
        assert kept.exists(), kept
