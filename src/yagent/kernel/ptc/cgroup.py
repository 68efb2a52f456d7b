"""ptc cgroup: a cgroup v2 child with `memory.max` for one worker, where the machine has one.

Contract:
- `probe()` finds where a child cgroup with a memory limit can be made: the cgroup2 mount (from
  mountinfo), this process's own cgroup (from `/proc/self/cgroup`), writable, with the `memory`
  controller delegated to children (enabled in `cgroup.subtree_control`, or enabled there now).
  It answers the directory or, when there is none, why — never a guess.
- `Cgroup.create(limit)` makes a uniquely named child, writes `memory.max` (and `memory.swap.max`
  = 0 where it exists, so swap cannot stretch the limit) and reads the limit back; any step
  failing removes the child and answers None with the reason.
- `join_argv()` is the argv prefix that moves the starting process into the child *before* it
  execs the launcher and the worker (a shell writing its own pid to `cgroup.procs`), so every
  process of the worker — launcher included — is inside it. `contains(pid)` verifies it.
- `oom_killed()` reads `memory.events` (`oom_kill` > 0); `close()` kills what is left
  (`cgroup.kill`, else SIGKILL per pid) and removes the child; a child that cannot be removed is
  logged as a warning, never silently leaked.
Paths are module-level seams (`MOUNTINFO`, `SELF_CGROUP`) so tests can point them at a fake tree.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import uuid
from dataclasses import dataclass
from pathlib import Path

MOUNTINFO = Path("/proc/self/mountinfo")
SELF_CGROUP = Path("/proc/self/cgroup")

log = logging.getLogger(__name__)


def cgroup2_mount(mountinfo: str) -> Path | None:
    """The mount point of the cgroup2 filesystem in a mountinfo text, or None."""
    for line in mountinfo.splitlines():
        head, sep, tail = line.partition(" - ")
        fields = head.split()
        if sep and tail.split()[:1] == ["cgroup2"] and len(fields) >= 5:
            return Path(fields[4])
    return None


def own_cgroup(self_cgroup: str) -> str | None:
    """This process's cgroup v2 path (the `0::` line), or None."""
    for line in self_cgroup.splitlines():
        if line.startswith("0::"):
            return line[3:].strip() or "/"
    return None


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def probe() -> tuple[Path | None, str]:
    """Where a memory-limited child can be created, or (None, why not)."""
    try:
        mount = cgroup2_mount(_read(MOUNTINFO))
        own = own_cgroup(_read(SELF_CGROUP))
    except OSError as exc:
        return None, f"cannot read the process's cgroup facts ({exc})"
    if mount is None or own is None:
        return None, "no cgroup v2 hierarchy is mounted for this process"
    base = mount / own.lstrip("/")
    if not os.access(base, os.W_OK):
        return None, f"{base} is not writable"
    control = base / "cgroup.subtree_control"
    try:
        if "memory" not in _read(base / "cgroup.controllers").split():
            return None, f"the memory controller is not available in {base}"
        if "memory" not in _read(control).split():
            control.write_text("+memory", encoding="utf-8")
        enabled = "memory" in _read(control).split()
    except OSError as exc:
        return None, f"the memory controller cannot be delegated under {base} ({exc})"
    if not enabled:
        return None, f"the memory controller is not delegated under {base}"
    return base, ""


@dataclass(slots=True)
class Cgroup:
    path: Path
    limit: int

    @classmethod
    def create(cls, limit: int, base: Path) -> tuple[Cgroup | None, str]:
        """A child of `base` limited to `limit` bytes, or (None, why not)."""
        path = base / f"yagent-ptc-{uuid.uuid4().hex[:12]}"
        try:
            path.mkdir()
        except OSError as exc:
            return None, f"cannot create {path} ({exc})"
        group = cls(path, limit)
        try:
            (path / "memory.max").write_text(str(limit), encoding="utf-8")
            swap = path / "memory.swap.max"
            if swap.exists():
                swap.write_text("0", encoding="utf-8")
            readback = _read(path / "memory.max").strip()
        except OSError as exc:
            group.close()
            return None, f"cannot set memory.max in {path} ({exc})"
        if readback != str(limit):
            group.close()
            return None, f"memory.max in {path} reads back {readback!r}, not {limit}"
        return group, ""

    def join_argv(self) -> list[str]:
        """An argv prefix: join this cgroup, then exec the rest of the argv."""
        return ["/bin/sh", "-c", 'echo $$ > "$0/cgroup.procs" && exec "$@"', str(self.path)]

    def pids(self) -> list[int]:
        try:
            text = _read(self.path / "cgroup.procs")
        except OSError:
            return []
        return [int(p) for p in text.split() if p.isdigit()]

    def contains(self, pid: int) -> bool:
        return pid in self.pids()

    def oom_killed(self) -> bool:
        try:
            text = _read(self.path / "memory.events")
        except OSError:
            return False
        for line in text.splitlines():
            key, _, value = line.partition(" ")
            if key == "oom_kill" and value.strip().isdigit():
                return int(value) > 0
        return False

    def kill(self) -> None:
        switch = self.path / "cgroup.kill"
        if switch.exists():
            with contextlib.suppress(OSError):
                switch.write_text("1", encoding="utf-8")
                return
        for pid in self.pids():
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)

    def close(self) -> bool:
        """Kill what is left and remove the child; False (and a warning) when it stays."""
        if not self.path.exists():
            return True
        self.kill()
        try:
            self.path.rmdir()
        except OSError as exc:
            log.warning("ptc: cgroup %s could not be removed: %s", self.path, exc)
            return False
        return True
