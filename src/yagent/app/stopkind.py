"""How a run ended, classified once (Director gate G8): the loop's session status, fan-out's
receipts and durable's commit gate all ask `stop_kind` instead of keeping their own status lists.

Contract:
- `stop_kind(status)` maps every loop end reason (`agents.results.Status`) to one `StopKind`;
  a status without a row is a `KeyError` at import time (the table is checked against the enum),
  never a silent default.
- A kind says three things, each read by one consumer:
  · `delivered` — the run handed back its work (finished through the exit call, or answered in
    plain text): a delegation's receipt is completed only then (`app.fanrun`);
  · `concluded` — the run ended on its own terms (delivered, or its step budget spent): its end
    is committed and it is never reopened automatically (`app.durable.CONCLUDED`);
  · `session_status` — the session store's status after the run (`app.turn`).
- `stop_kind_of(text)` classifies a recorded status (a `run_end` event's); unknown text is a
  `ValueError` naming it, or the caller's explicit `unknown` kind.
Deliberately a table, not `kernel.durable.statemachine`: there is no transition to judge here, only
a terminal state to name (docs/agents.md).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping

from yagent.agents.results import Status


class StopKind(enum.StrEnum):
    DELIVERED = "delivered"  # finished or answered
    EXHAUSTED = "exhausted"  # the step budget ran out: concluded, nothing delivered
    FAILED = "failed"  # an error (model, tools, hooks) interrupted the run
    TIMED_OUT = "timed_out"  # an idle or total timeout interrupted it
    CANCELLED = "cancelled"
    PAUSED = "paused"  # stopped at a step boundary: resumable, not a failure

    @property
    def delivered(self) -> bool:
        return self is StopKind.DELIVERED

    @property
    def concluded(self) -> bool:
        return self in (StopKind.DELIVERED, StopKind.EXHAUSTED)

    @property
    def session_status(self) -> str:
        return _SESSION_STATUS[self]


_SESSION_STATUS: Mapping[StopKind, str] = {
    StopKind.DELIVERED: "finished",
    StopKind.EXHAUSTED: "finished",
    StopKind.FAILED: "failed",
    StopKind.TIMED_OUT: "failed",
    StopKind.CANCELLED: "cancelled",
    StopKind.PAUSED: "paused",
}

_KINDS: Mapping[Status, StopKind] = {
    Status.FINISHED: StopKind.DELIVERED,
    Status.ANSWERED: StopKind.DELIVERED,
    Status.MAX_STEPS: StopKind.EXHAUSTED,
    Status.ERROR: StopKind.FAILED,
    Status.IDLE_TIMEOUT: StopKind.TIMED_OUT,
    Status.TOTAL_TIMEOUT: StopKind.TIMED_OUT,
    Status.CANCELLED: StopKind.CANCELLED,
    Status.PAUSED: StopKind.PAUSED,
}
for _status in Status:  # a new end reason without a row fails at import, not at run time
    _KINDS[_status]


def stop_kind(status: Status) -> StopKind:
    return _KINDS[status]


def stop_kind_of(text: str, *, unknown: StopKind | None = None) -> StopKind:
    """The kind of a recorded status text; unknown text (a missing or damaged record) is
    `unknown` when given, else a `ValueError`."""
    try:
        return _KINDS[Status(text)]
    except ValueError:
        if unknown is not None:
            return unknown
        raise ValueError(f"unknown run status {text!r}") from None


def concluding_statuses() -> frozenset[str]:
    """The status texts whose run is concluded: the commit gate's terminal vocabulary."""
    return frozenset(s.value for s, kind in _KINDS.items() if kind.concluded)
