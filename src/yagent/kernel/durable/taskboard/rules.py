"""taskboard rules: every board's judgement, as pure functions over the rows an operation reads.

Contract: a board reads the task (by id or by token) and, for a claim, its dependencies, calls one
function here with its `now` (and, for a claim, a token it just minted), and writes the returned
task in the same atomic transaction. A function returns the task to write or raises before
anything is written; none reads a clock or does I/O, so memory and SQLite boards decide alike.

Claim judges in this order: finished > claimed by a live lease > blocked by a dependency > grant
(an OPEN or FAILED task, or a claim whose lease expired — the old token then holds nothing).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from yagent.kernel.durable.taskboard.types import (
    AlreadyClaimedError,
    BlockedError,
    FinishedError,
    Lease,
    LeaseExpiredError,
    StaleTokenError,
    Status,
    Task,
)


def claim(
    task: Task,
    deps: Mapping[str, Task | None],
    owner: str,
    ttl: float,
    now: float,
    token: str,
) -> Task:
    if task.status.terminal:
        raise FinishedError(f"taskboard: {task.id!r} is {task.status}")
    _not_live(task, now)
    unfinished = [
        d for d in task.depends_on if (dep := deps.get(d)) is None or dep.status is not Status.DONE
    ]
    if unfinished:
        raise BlockedError(f"taskboard: {task.id!r} waits for {unfinished}")
    return replace(
        task,
        status=Status.CLAIMED,
        owner=owner,
        lease=Lease(token, owner, now + ttl),
        attempts=task.attempts + 1,
    )


def _not_live(task: Task, now: float) -> None:
    lease = task.lease
    if task.status is Status.CLAIMED and lease is not None and lease.expires_at > now:
        raise AlreadyClaimedError(task.id, lease.owner, lease.expires_at)


def held(task: Task | None, token: str, now: float) -> tuple[Task, Lease]:
    """The task `token` holds a live claim on, and that claim; a `TokenError` otherwise."""
    lease = None if task is None else task.lease
    if task is None or task.status is not Status.CLAIMED or lease is None or lease.token != token:
        raise StaleTokenError(
            "taskboard: the token holds no claim (released, finished, taken over)"
        )
    if lease.expires_at <= now:
        raise LeaseExpiredError(f"taskboard: the claim of {task.owner!r} on {task.id!r} expired")
    return task, lease


def renew(task: Task | None, token: str, ttl: float, now: float) -> Task:
    current, lease = held(task, token, now)
    return replace(current, lease=replace(lease, expires_at=now + ttl))


def settle(task: Task | None, token: str, status: Status, result: str | None, now: float) -> Task:
    """End the claim of `token`: back to OPEN (release: `result` None keeps the last one), or
    DONE / FAILED with a result."""
    current, _ = held(task, token, now)
    kept = current.result if result is None else result
    return replace(current, status=status, owner="", lease=None, result=kept)


def cancel(task: Task, now: float) -> Task:
    if task.status.terminal:
        raise FinishedError(f"taskboard: {task.id!r} is already {task.status}")
    _not_live(task, now)
    return replace(task, status=Status.CANCELLED, owner="", lease=None)
