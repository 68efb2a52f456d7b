"""taskboard values and errors: tasks, claims (leases with store-minted tokens), snapshots.

Contract:
- A `Task` is a unit of delegated work: `status`, the ids it `depends_on`, an opaque `payload`,
  and while CLAIMED its `owner` and `lease`. DONE and CANCELLED are terminal; FAILED is not — a
  failed task can be claimed again, so one failure never pins a subtask down for good.
- A claim asks only for a duration (`ClaimRequest(ttl)`): the token that identifies it is minted
  by the store and returned inside the `Lease` of the claimed `Task`. A caller that could bring
  its own token could forge anyone's, and "release and complete by token only" would mean nothing.
- Refusals of a claim are `ClaimError`s (already claimed, blocked by a dependency, finished); a
  token that no longer holds its task is a `TokenError`. A backend failure is a `StoreError` and
  changed nothing.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Iterable
from dataclasses import dataclass

from yagent.kernel.durable.clock import Clock as Clock
from yagent.kernel.durable.clock import SystemClock as SystemClock


class TaskboardError(Exception):
    """Root of every taskboard error."""


class InvalidArgumentError(TaskboardError, ValueError):
    """An argument that can never be valid (empty id, non-positive ttl, malformed task)."""


class NotFoundError(TaskboardError, LookupError):
    """No task has this id."""


class DuplicateTaskError(TaskboardError):
    """A task with this id already exists."""


class UnknownDependencyError(TaskboardError):
    """A new task depends on an id the board does not hold."""


class ClaimError(TaskboardError):
    """The claim was refused; nothing changed."""


class AlreadyClaimedError(ClaimError):
    """Another live claim holds the task."""

    def __init__(self, task_id: str, owner: str, until: float) -> None:
        super().__init__(f"taskboard: {task_id!r} is claimed by {owner!r} until {until}")
        self.task_id = task_id
        self.owner = owner
        self.until = until


class BlockedError(ClaimError):
    """A dependency of the task is not DONE yet."""


class FinishedError(ClaimError):
    """The task is terminal (DONE or CANCELLED)."""


class TokenError(TaskboardError):
    """The token does not entitle its bearer to the operation."""


class StaleTokenError(TokenError):
    """The token holds no claim: released, completed, failed, taken over, or never minted."""


class LeaseExpiredError(TokenError):
    """The token's claim is still the latest, but its time ran out: it holds nothing."""


class InvariantError(TaskboardError):
    """A snapshot offered to `seed` breaks the board's invariants (see `check`)."""


class StoreError(TaskboardError):
    """The backend could not run the operation; nothing is known to have changed."""


class Status(enum.StrEnum):
    OPEN = "open"
    CLAIMED = "claimed"
    DONE = "done"
    FAILED = "failed"  # not terminal: claimable again
    CANCELLED = "cancelled"

    @property
    def terminal(self) -> bool:
        return self in (Status.DONE, Status.CANCELLED)


def require_text(what: str, value: object) -> str:
    if not isinstance(value, str) or not value:
        raise InvalidArgumentError(f"taskboard: {what} must be a non-empty string, got {value!r}")
    return value


def require_ids(what: str, values: Iterable[str]) -> tuple[str, ...]:
    if isinstance(values, str) or not isinstance(values, Iterable):
        raise InvalidArgumentError(f"taskboard: {what} must be a sequence of ids, got {values!r}")
    ids = tuple(values)
    for value in ids:
        require_text(what, value)
    if len(set(ids)) != len(ids):
        raise InvalidArgumentError(f"taskboard: {what} lists an id twice: {ids}")
    return ids


@dataclass(frozen=True, slots=True)
class ClaimRequest:
    """How long the claim should last, in seconds. The token is the store's to mint."""

    ttl: float

    def __post_init__(self) -> None:
        ttl = self.ttl
        if isinstance(ttl, bool) or not isinstance(ttl, int | float) or not math.isfinite(ttl):
            raise InvalidArgumentError(f"taskboard: ttl must be a finite number, got {ttl!r}")
        if ttl <= 0:
            raise InvalidArgumentError(f"taskboard: ttl must be positive, got {ttl!r}")


@dataclass(frozen=True, slots=True)
class Lease:
    """A claim: `token` (store-minted, unique per claim) is what releases or completes it."""

    token: str
    owner: str
    expires_at: float

    def __post_init__(self) -> None:
        require_text("lease token", self.token)
        require_text("lease owner", self.owner)


@dataclass(frozen=True, slots=True)
class Task:
    """One task as stored; `attempts` counts the claims it has been given."""

    id: str
    status: Status = Status.OPEN
    depends_on: tuple[str, ...] = ()
    payload: str = ""
    owner: str = ""
    lease: Lease | None = None
    result: str = ""
    attempts: int = 0

    def __post_init__(self) -> None:
        require_text("task id", self.id)
        if not isinstance(self.status, Status):
            raise InvalidArgumentError(f"taskboard: status must be a Status, got {self.status!r}")
        object.__setattr__(self, "depends_on", require_ids("depends_on", self.depends_on))
        texts = (self.payload, self.owner, self.result)
        if not all(isinstance(t, str) for t in texts):
            raise InvalidArgumentError("taskboard: payload, owner and result must be strings")
        if self.lease is not None and not isinstance(self.lease, Lease):
            raise InvalidArgumentError(f"taskboard: lease must be a Lease, got {self.lease!r}")
        attempts = self.attempts
        if isinstance(attempts, bool) or not isinstance(attempts, int) or attempts < 0:
            raise InvalidArgumentError(f"taskboard: attempts must be an int >= 0, got {attempts!r}")

    def live(self, now: float) -> bool:
        """Whether a claim holds the task at `now` (an expired claim holds nothing)."""
        return (
            self.status is Status.CLAIMED and self.lease is not None and self.lease.expires_at > now
        )


@dataclass(frozen=True, slots=True)
class BoardState:
    """Every task on the board at `taken_at`, in the order they were posted."""

    tasks: tuple[Task, ...]
    taken_at: float

    def task(self, task_id: str) -> Task | None:
        return next((t for t in self.tasks if t.id == task_id), None)
