"""Helpers for tests that check a process tree really died."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

import anyio


def marker() -> str:
    """A `sleep` argument no other process on the machine has: 1000.<random digits>."""
    return f"1000.{secrets.randbelow(10**9):09d}"


def alive(token: str) -> list[int]:
    """Pids whose command line contains `token` (zombies have none, so they do not count)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if token.encode() in cmdline:
            found.append(int(entry.name))
    return found


async def gone(token: str, within: float = 10.0) -> bool:
    """True once no process carries `token`; a bounded negative window, not a timing claim."""
    with anyio.move_on_after(within):
        while True:
            if not alive(token):
                return True
            await anyio.sleep(0.05)  # polling /proc: there is no event to wait on
    return False
