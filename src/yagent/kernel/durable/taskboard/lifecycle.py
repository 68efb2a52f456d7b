"""taskboard lifecycle: a task's status moves, as one `kernel.durable.statemachine` table.

Contract: `LIFECYCLE` is the only place that says which operation may move a task from which
status, and to which; every board operation that changes a status asks `move` (through
`rules`), so a move the table does not hold is refused by every board alike. The table:
- claim: OPEN, FAILED → CLAIMED; CLAIMED → CLAIMED only when the claim has lapsed (a takeover);
- renew (CLAIMED → CLAIMED), release (→ OPEN), complete (→ DONE), fail (→ FAILED): only while
  the claim is live;
- cancel: OPEN, FAILED → CANCELLED; CLAIMED → CANCELLED only when the claim has lapsed;
- DONE and CANCELLED are terminal (the same set as `Status.terminal`): nothing leaves them, so a
  completed task's result can never be overwritten, nor a cancelled task revived.
Refusals are the board's typed errors, never the machine's: a terminal task is `FinishedError`,
a live claim in the way is `AlreadyClaimedError`, a lapsed claim acted on by its token is
`LeaseExpiredError`; any other move the table lacks is an `IllegalMoveError`.
Left to `rules`: whether a token names the claim, and whether the dependencies are done.
"""

from __future__ import annotations

import enum

from yagent.kernel.durable.statemachine import (
    GuardRejectedError,
    IllegalTransitionError,
    Machine,
    TerminalStateError,
)
from yagent.kernel.durable.statemachine import Transition as T
from yagent.kernel.durable.taskboard.types import (
    AlreadyClaimedError,
    FinishedError,
    LeaseExpiredError,
    Status,
    Task,
    TaskboardError,
)


class IllegalMoveError(TaskboardError):
    """`LIFECYCLE` holds no move for this operation from the task's status; nothing changed."""


class Event(enum.StrEnum):
    CLAIM = "claim"
    RENEW = "renew"
    RELEASE = "release"
    COMPLETE = "complete"
    FAIL = "fail"
    CANCEL = "cancel"


def _live(live: object) -> bool:
    """The guard's context is whether a claim holds the task now (`Task.live`)."""
    return live is True


def _lapsed(live: object) -> bool:
    return live is False


OPEN, CLAIMED, FAILED = Status.OPEN, Status.CLAIMED, Status.FAILED
TRANSITIONS: tuple[T[Status, Event], ...] = (
    T(OPEN, Event.CLAIM, CLAIMED),
    T(FAILED, Event.CLAIM, CLAIMED, name="claim a failed task again"),
    T(CLAIMED, Event.CLAIM, CLAIMED, _lapsed, "take over a lapsed claim"),
    T(CLAIMED, Event.RENEW, CLAIMED, _live),
    T(CLAIMED, Event.RELEASE, OPEN, _live),
    T(CLAIMED, Event.COMPLETE, Status.DONE, _live),
    T(CLAIMED, Event.FAIL, FAILED, _live),
    T(OPEN, Event.CANCEL, Status.CANCELLED),
    T(FAILED, Event.CANCEL, Status.CANCELLED),
    T(CLAIMED, Event.CANCEL, Status.CANCELLED, _lapsed, "cancel a lapsed claim"),
)
LIFECYCLE: Machine[Status, Event] = Machine(
    TRANSITIONS,
    initial=OPEN,
    terminal=[s for s in Status if s.terminal],
    states=Status,
)


def move(task: Task, event: Event, now: float) -> Status:
    """The status `event` moves `task` to at `now`, or the board's typed refusal."""
    live = task.live(now)
    try:
        return LIFECYCLE.fire(task.status, event, live)
    except TerminalStateError:
        raise FinishedError(f"taskboard: {task.id!r} is already {task.status}") from None
    except GuardRejectedError:  # the guards judge liveness only
        lease = task.lease
        if live and lease is not None:  # a claim or a cancel while someone holds the task
            raise AlreadyClaimedError(task.id, lease.owner, lease.expires_at) from None
        raise LeaseExpiredError(  # a token acting on a claim that lapsed
            f"taskboard: the claim of {task.owner!r} on {task.id!r} expired"
        ) from None
    except IllegalTransitionError as exc:
        raise IllegalMoveError(f"taskboard: {task.id!r}: {exc}") from None
