"""How a background job of the session sandbox is told: the `Job` value and its short view.

Guarantees:
- `Job.of(view, explain)` builds a job from the supervisor's listing (`jobhost.supervisor`) and
  the last `TAIL_BYTES` of its log (an unreadable log reads as empty). An ended job's `state` says
  how it ended: the limit `explain` (`Supervision.explain`) names from its exit status and that
  tail, else its signal (cause said not known) or exit code, else (processes a command left
  running) that how it ended is not known — and, when a process that left the job still held its
  output open after the rest ended (`output_open`), that its log may still grow.
- `jobs_view(jobs)` is at most `VIEW_LINES` lines plus a line counting the older ones.
Leaves to `tools.jobs` everything that talks to the sandbox.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

TAIL_LINES = 5
TAIL_BYTES = 4096
VIEW_LINES = 5
"""Jobs shown in a run_bash result's jobs view; list_jobs shows them all."""

Explain = Callable[[int | None, str], str | None]
"""The limit that ended a program, from its exit status and output (`Supervision.explain`)."""


@dataclass(frozen=True, slots=True)
class Job:
    """One background job as the supervisor and its log tell it."""

    id: int
    command: str
    pid: int
    pids: tuple[int, ...]
    running: bool
    exit_code: int | None
    stopped: bool
    log: str
    tail: tuple[str, ...] = ()
    cause: str = ""
    """Why an ended job ended, when a limit names itself (see `ended`)."""
    output_open: bool = False
    """Ended while a process outside it still held its output open (its log may grow)."""

    @classmethod
    def of(cls, view: Mapping[str, Any], explain: Explain | None = None) -> Job:
        log = str(view.get("log") or "")
        code = None if view.get("exit_code") is None else int(view["exit_code"])
        running, stopped = bool(view.get("running")), bool(view.get("stopped"))
        last = _last(log)
        ended = not running and not stopped and code not in (None, 0) and explain is not None
        return cls(
            id=int(view["id"]),
            command=str(view.get("command", "")),
            pid=int(view.get("pid", 0)),
            pids=tuple(int(p) for p in view.get("pids", ())),
            running=running,
            exit_code=code,
            stopped=stopped,
            log=log,
            tail=tuple(last.splitlines()[-TAIL_LINES:]),
            cause=(explain(code, last) or "") if ended and explain is not None else "",
            output_open=bool(view.get("output_open")),
        )

    @property
    def state(self) -> str:
        if self.running:
            return "running"
        if self.stopped:
            return "stopped"
        return self.ended()

    def ended(self) -> str:
        """How a job that ended by itself ended (see the module contract)."""
        how = self._how()
        if self.output_open:
            how += (
                "; its output was still held open after its processes ended, by a process that "
                "left the job (what it writes still goes to the log)"
            )
        return how

    def _how(self) -> str:
        if self.cause:
            return self.cause
        code = self.exit_code
        if code is None:
            return "ended (how is not known: its processes were left running by its command)"
        if code < 0:
            name = _signal_name(-code)
            return f"killed by {name} (the cause is not known: no limit names itself)"
        return f"exited with code {code}"

    def line(self) -> str:
        return f"job {self.id} [{self.state}] pid {self.pid}: {_short(self.command)}"

    def to_payload(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "command": self.command,
            "pid": self.pid,
            "pids": list(self.pids),
            "state": self.state,
            "running": self.running,
            "exit_code": self.exit_code,
            "cause": self.cause or None,
            "output_open": self.output_open,
            "log": self.log,
            "last_lines": list(self.tail),
        }


def jobs_view(jobs: Sequence[Job]) -> str:
    """The short `jobs` block appended to a run_bash result (empty when there are none)."""
    if not jobs:
        return ""
    shown = [f"  {job.line()}" for job in jobs[-VIEW_LINES:]]
    more = len(jobs) - len(shown)
    head = "jobs (background, in the session sandbox; pids are the sandbox's):"
    tail = [f"  … and {more} older (list_jobs shows all)"] if more > 0 else []
    return "\n".join([head, *tail, *shown])


def _last(log: str) -> str:
    """The last `TAIL_BYTES` of `log`, from its first whole line ("" when unreadable)."""
    if not log:
        return ""
    try:
        with open(log, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - TAIL_BYTES))
            data = f.read()
    except OSError:
        return ""
    text = data.decode("utf-8", errors="replace")
    return text.partition("\n")[2] if size > TAIL_BYTES else text  # the first line may be cut


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _short(command: str, limit: int = 80) -> str:
    flat = " ".join(command.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
