"""taskboard rules: every board's judgement, as pure functions over the rows an operation reads.

Contract: a board reads the task (by id or by token) and, for a claim, its dependencies, calls one
function here with its `now` (and, for a claim, a token it just minted), and writes the returned
task in the same atomic transaction. A function returns the task to write or raises before
anything is written; none reads a clock or does I/O, so memory and SQLite boards decide alike.

Which status an operation may move a task from, and to which, is `lifecycle.LIFECYCLE`'s alone:
every function here fires it (`lifecycle.move`) for the status it writes.
Claim judges in this order: finished > claimed by a live lease > blocked by a dependency > grant
(an OPEN or FAILED task, or a claim whose lease expired — the old token then holds nothing).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from yagent.kernel.durable.taskboard.lifecycle import Event, move
from yagent.kernel.durable.taskboard.types import BlockedError, Lease, StaleTokenError, Status, Task


def claim(
    task: Task,
    deps: Mapping[str, Task | None],
    owner: str,
    ttl: float,
    now: float,
    token: str,
) -> Task:
    target = move(task, Event.CLAIM, now)
    unfinished = [
        d for d in task.depends_on if (dep := deps.get(d)) is None or dep.status is not Status.DONE
    ]
    if unfinished:
        raise BlockedError(f"taskboard: {task.id!r} waits for {unfinished}")
    return replace(
        task,
        status=target,
        owner=owner,
        lease=Lease(token, owner, now + ttl),
        attempts=task.attempts + 1,
    )


def held(task: Task | None, token: str) -> tuple[Task, Lease]:
    """The task `token` names the latest claim of, and that claim; a `StaleTokenError` otherwise.
    Whether the claim is still live is the lifecycle's to judge (`LeaseExpiredError`)."""
    lease = None if task is None else task.lease
    if task is None or task.status is not Status.CLAIMED or lease is None or lease.token != token:
        raise StaleTokenError(
            "taskboard: the token holds no claim (released, finished, taken over)"
        )
    return task, lease


def renew(task: Task | None, token: str, ttl: float, now: float) -> Task:
    current, lease = held(task, token)
    return replace(
        current, status=move(current, Event.RENEW, now), lease=replace(lease, expires_at=now + ttl)
    )


def settle(task: Task | None, token: str, event: Event, result: str | None, now: float) -> Task:
    """End the claim of `token` by `event`: release (back to OPEN; `result` None keeps the last
    one), complete (DONE) or fail (FAILED), with a result."""
    current, _ = held(task, token)
    kept = current.result if result is None else result
    status = move(current, event, now)
    return replace(current, status=status, owner="", lease=None, result=kept)


def cancel(task: Task, now: float) -> Task:
    return replace(task, status=move(task, Event.CANCEL, now), owner="", lease=None)
