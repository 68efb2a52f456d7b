"""A full disk under the yagent home: the run stops at its next step boundary, resumable.

Contract:
- `FullDisk.write(where, fn, *args, **kwargs)` makes one write of the run's record (a session
  store row, a durable store transaction, a spilled output). When it fails because the disk is
  full (`sqlitefile.disk_full`: SQLITE_FULL, ENOSPC, EDQUOT anywhere in the cause chain), the
  first such failure is kept (`hit`: the file it was writing, and why), `on_full` is called once
  (the app halts its pause gate: no further tool call starts, the loop ends at the step boundary
  as "paused"), and the write returns None instead of raising. Any other failure propagates.
- From then on every write through this object is skipped (`skipped` counts them): what is
  stored of the run stays an exact prefix of what happened — never a later record after a gap
  (SQLite rolls each failed transaction back whole, and a write that would have fitted after
  one that did not is not attempted). The run's checkpoint therefore still says the last step
  RUNNING, so `yagent resume SID` continues it once space is back; a call whose result was not
  stored is settled there as interrupted, never re-run.
- `line(session_id)` is what the command prints: one line naming the file and what to do.
Leaves to the host: the exit status (`EXIT_FULL`), and ending the process — a sealed record
accepts nothing more, so the host must not run another turn with this object.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import ParamSpec, TypeVar

from yagent.kernel.durable import sqlitefile

EXIT_FULL = 75  # sysexits EX_TEMPFAIL: try again later (after freeing space)

P = ParamSpec("P")
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Hit:
    """The first write that found the disk full."""

    path: str
    error: str


class FullDisk:
    """The run's record writes, sealed at the first full disk (see the module contract)."""

    def __init__(self, on_full: Callable[[str], None]) -> None:
        self.hit: Hit | None = None
        self.skipped = 0
        self._on_full = on_full

    def write(
        self,
        where: str | os.PathLike[str],
        fn: Callable[P, T],
        *args: P.args,
        **kwargs: P.kwargs,
    ) -> T | None:
        if self.hit is not None:
            self.skipped += 1
            return None
        try:
            return fn(*args, **kwargs)
        except Exception as exc:
            if not self.note(where, exc):
                raise
            return None

    def note(self, where: str | os.PathLike[str], exc: BaseException) -> bool:
        """True (and the record sealed) when `exc` is the disk being full; False otherwise."""
        if not sqlitefile.disk_full(exc):
            return False
        if self.hit is None:
            self.hit = Hit(os.fspath(where), str(exc))
            self._on_full(self.reason())
        return True

    def reason(self) -> str:
        where = self.hit.path if self.hit is not None else "?"
        return f"the disk holding {where} is full; the run's record cannot be written"

    def line(self, session_id: str) -> str:
        where = self.hit.path if self.hit is not None else "?"
        return (
            f"yagent: the disk holding {where} is full; free space and run "
            f"`yagent resume {session_id}`"
        )
