"""shell.procgroup: signalling process groups, and the registry of in-flight foreground groups.

Guarantees: `kill_live_process_groups()` reaches every group registered and not yet unregistered;
signalling a group that is already gone is not an error. The registry takes no lock: plain dict
operations are atomic under the GIL, and the hard-exit path may run from a signal handler that
interrupted a registration — a lock could deadlock exactly then.
Leaves to the caller: registering on spawn and unregistering when its run returns.
"""

from __future__ import annotations

import os
import signal
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class LiveGroup:
    """An in-flight foreground run: its process group id, command and start (monotonic) time."""

    pgid: int
    command: str
    started: float


_live: dict[int, LiveGroup] = {}


def register(group: LiveGroup) -> None:
    _live[group.pgid] = group


def unregister(pgid: int) -> None:
    _live.pop(pgid, None)


def live_groups() -> tuple[LiveGroup, ...]:
    """A snapshot of the registered in-flight foreground process groups."""
    return tuple(_live.values())


def kill_live_process_groups() -> int:
    """SIGKILL every registered in-flight foreground group (for the hard exit after a second
    interrupt); returns how many groups were signalled. The runs unregister themselves."""
    return sum(signal_group(group.pgid, signal.SIGKILL) for group in live_groups())


def signal_group(pgid: int, signum: signal.Signals) -> bool:
    """Send `signum` to the group; False when there was nobody (left) to send it to."""
    try:
        os.killpg(pgid, signum)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def group_alive(pgid: int) -> bool:
    """Whether the group has a member that is not a zombie. Zombies cannot be killed further and,
    where pid 1 does not reap orphans (containers), they linger: counting them would turn every
    kill into a full grace period."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        entries = os.listdir("/proc")
    except OSError:
        return True  # no procfs: kill() said there is someone, believe it
    for name in entries:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as stat_file:
                stat = stat_file.read()
        except OSError:
            continue
        # Fields after the parenthesised command name: state, ppid, pgrp, ...
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) > 2 and int(fields[2]) == pgid and fields[0] not in (b"Z", b"X"):
            return True
    return False
