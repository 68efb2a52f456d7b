"""Resource limits for sandboxed programs, and the receipts that say a limit ended a run.

Guarantees:
- `Limits` holds five bounds, each a positive integer (anything else: `LimitsError`):
  `memory_mb` (`RLIMIT_DATA`: heap and private writable mappings, per process — address-space
  reservations that are never written, as V8 and the JVM make, are not counted), `max_processes`
  (`RLIMIT_NPROC`: tasks, threads included), `cpu_seconds` (`RLIMIT_CPU` per process: SIGXCPU,
  then SIGKILL `CPU_GRACE` seconds later), `file_size_mb` (`RLIMIT_FSIZE`: SIGXFSZ / EFBIG) and
  `open_files` (`RLIMIT_NOFILE`). Core dumps are off (`RLIMIT_CORE` 0).
- `prlimit(executable)` is the argv prefix that sets all of them, soft and hard, before the
  program starts; it never asks for more than this process's own hard limit (which a sandboxed
  program could not raise either), so the values it states are the values in force.
- `explain(exit_code, output)` names the limit that ended a run, or None: certain when the exit
  status is the limit's signal (SIGXCPU, SIGXFSZ); inferred — and said to be — when it is a
  shell's report of that signal (128 + n) or when the output carries the error a refused
  allocation, fork or open leaves behind. A run that succeeded is only told about fork failures
  (the process limit was reached, though it did not end the run).
- `Supervision` is what a host polls while a run goes on: `breach()` reports the process limit
  reached (the sandbox's task count, where the backend can count it), so the host can kill the
  run at once instead of waiting for its timeout while every new process fails.
Leaves to the host: choosing the values (`default_memory_mb` suggests one), killing the run on a
breach, and cgroup controllers (not used here: see docs/security.md).
"""

from __future__ import annotations

import dataclasses
import resource
import signal
from collections.abc import Callable
from dataclasses import dataclass, field

from yagent.kernel.confine.sandbox.errors import SandboxError

MIB = 1024 * 1024
CPU_GRACE = 5
"""Seconds between SIGXCPU (the soft limit) and SIGKILL (the hard one)."""
POLL_INTERVAL = 0.25
"""Seconds between two `Supervision.breach` polls (a seam)."""
MEMORY_SHARE = 0.25
MEMORY_CEILING_MB = 4096
_MEMORY_SIGNS = (
    "MemoryError",
    "Cannot allocate memory",
    "memory exhausted",
    "std::bad_alloc",
    "out of memory",
    "Out of memory",
    "JavaScript heap out of memory",
)
_FORK_SIGNS = (
    "fork: retry: Resource temporarily unavailable",
    "fork: Resource temporarily unavailable",
    "can't start new thread",
    "BlockingIOError: [Errno 11] Resource temporarily unavailable",
)
_FILE_SIGNS = ("File size limit exceeded", "File too large")
_CPU_SIGNS = ("CPU time limit exceeded",)
_OPEN_SIGNS = ("Too many open files",)


class LimitsError(SandboxError, ValueError):
    """Limits that cannot be applied (not a positive integer)."""


def default_memory_mb(meminfo: str = "/proc/meminfo") -> int:
    """A quarter of the machine's memory, at most `MEMORY_CEILING_MB` (2048 if unreadable)."""
    try:
        with open(meminfo, encoding="ascii") as source:
            for line in source:
                if line.startswith("MemTotal:"):
                    total_mb = int(line.split()[1]) // 1024
                    return max(min(int(total_mb * MEMORY_SHARE), MEMORY_CEILING_MB), 64)
    except (OSError, ValueError, IndexError):
        pass
    return 2048


@dataclass(frozen=True, slots=True)
class Limits:
    """Per-process bounds for every program of one sandbox (see the module contract)."""

    memory_mb: int = field(default_factory=default_memory_mb)
    max_processes: int = 512
    cpu_seconds: int = 3600
    file_size_mb: int = 2048
    open_files: int = 4096

    def __post_init__(self) -> None:
        for item in dataclasses.fields(self):
            value = getattr(self, item.name)
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise LimitsError(
                    f"sandbox limit {item.name} must be a positive integer: {value!r}"
                )

    def settings(self) -> dict[str, tuple[int, int]]:
        """prlimit resource name → (soft, hard), each clamped to this process's hard limit."""
        wanted = {
            "data": (resource.RLIMIT_DATA, self.memory_mb * MIB, self.memory_mb * MIB),
            "nproc": (resource.RLIMIT_NPROC, self.max_processes, self.max_processes),
            "cpu": (resource.RLIMIT_CPU, self.cpu_seconds, self.cpu_seconds + CPU_GRACE),
            "fsize": (resource.RLIMIT_FSIZE, self.file_size_mb * MIB, self.file_size_mb * MIB),
            "nofile": (resource.RLIMIT_NOFILE, self.open_files, self.open_files),
            "core": (resource.RLIMIT_CORE, 0, 0),
        }
        out = {}
        for name, (which, soft, hard) in wanted.items():
            ceiling = resource.getrlimit(which)[1]
            if ceiling != resource.RLIM_INFINITY:
                soft, hard = min(soft, ceiling), min(hard, ceiling)
            out[name] = (soft, hard)
        return out

    def in_force(self) -> Limits:
        """These limits as they will hold (clamped to this process's hard limits)."""
        got = self.settings()
        return Limits(
            memory_mb=max(got["data"][0] // MIB, 1),
            max_processes=got["nproc"][0],
            cpu_seconds=got["cpu"][0],
            file_size_mb=max(got["fsize"][0] // MIB, 1),
            open_files=got["nofile"][0],
        )

    def prlimit(self, executable: str = "prlimit") -> list[str]:
        """The argv prefix that applies these limits to the program that follows it."""
        flags = [f"--{name}={soft}:{hard}" for name, (soft, hard) in self.settings().items()]
        return [executable, *flags, "--"]

    def explain(self, exit_code: int | None, output: str) -> str | None:
        """The limit that ended a run that did not succeed, or None (see the module contract)."""
        if exit_code == 0:  # only the fork failures a successful run may still have met
            return next(
                (
                    f"process limit {self.max_processes} reached: some processes could not "
                    f"start (inferred: {sign!r} in the output)"
                    for sign in _FORK_SIGNS
                    if sign in output
                ),
                None,
            )
        for signum, what in (
            (signal.SIGXCPU, f"CPU time limit {self.cpu_seconds} s"),
            (signal.SIGXFSZ, f"file size limit {self.file_size_mb} MiB"),
        ):
            if exit_code == -signum:
                return f"killed: {what} ({signum.name})"
            if exit_code == 128 + signum:
                return (
                    f"killed: {what} (inferred: exit code {exit_code} is 128 + {signum.name}, "
                    "how bwrap and shells report a program that signal killed)"
                )
        for signs, said in (
            (_CPU_SIGNS, f"killed: CPU time limit {self.cpu_seconds} s"),
            (_FILE_SIGNS, f"killed: file size limit {self.file_size_mb} MiB"),
            (_MEMORY_SIGNS, f"killed: memory limit {self.memory_mb} MiB"),
            (_FORK_SIGNS, f"killed: process limit {self.max_processes}"),
            (_OPEN_SIGNS, f"failed: open files limit {self.open_files}"),
        ):
            for sign in signs:
                if sign in output:
                    return f"{said} (inferred: {sign!r} in the output)"
        return None


@dataclass(frozen=True, slots=True)
class Supervision:
    """What a host watches during one sandboxed run: the limits in force and, where the backend
    can count them, the sandbox's tasks."""

    limits: Limits
    count: Callable[[], int] | None = None
    interval: float = POLL_INTERVAL

    def breach(self) -> str | None:
        """A receipt when the sandbox is at its process limit (no new process can start)."""
        if self.count is None:
            return None
        held = self.count()
        if held < self.limits.max_processes:
            return None
        return (
            f"killed: process limit {self.limits.max_processes} (the sandbox held {held} "
            "processes and threads, so no new one could start; the run was stopped instead of "
            "waiting for its timeout)"
        )

    def explain(self, exit_code: int | None, output: str) -> str | None:
        return self.limits.explain(exit_code, output)
