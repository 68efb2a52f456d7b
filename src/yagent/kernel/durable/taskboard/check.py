"""taskboard check: the invariants every board snapshot must hold, judged as data.

`check(snapshot)` returns every violation (an empty tuple means the snapshot is sound); it reads
nothing but the snapshot. The invariants:
- ids are unique;
- every dependency exists, and dependencies form no cycle;
- claimed ⇔ lease: a CLAIMED task carries a lease whose owner is the task's owner; no other task
  carries a lease or an owner (an owner without a claim is a claim nobody can release);
- no claim while a dependency is unfinished (every dependency of a CLAIMED task is DONE);
- terminal tasks (DONE, CANCELLED) have no owner.
Lease expiry is not judged: an expired claim is still a claim until someone takes the task over.
"""

from __future__ import annotations

import enum
from collections import Counter
from dataclasses import dataclass

from yagent.kernel.durable.taskboard.types import BoardState, Status, Task


class Invariant(enum.StrEnum):
    DUPLICATE_ID = "duplicate_id"
    MISSING_DEPENDENCY = "missing_dependency"
    DEPENDENCY_CYCLE = "dependency_cycle"
    CLAIM_WITHOUT_LEASE = "claim_without_lease"
    LEASE_WITHOUT_CLAIM = "lease_without_claim"
    OWNER_WITHOUT_CLAIM = "owner_without_claim"
    CLAIMED_WHILE_BLOCKED = "claimed_while_blocked"
    TERMINAL_WITH_OWNER = "terminal_with_owner"


@dataclass(frozen=True, slots=True)
class Violation:
    task_id: str
    rule: Invariant
    detail: str


def check(snapshot: BoardState) -> tuple[Violation, ...]:
    """Every invariant the snapshot breaks, grouped by task in snapshot order."""
    found: list[Violation] = []
    counts = Counter(t.id for t in snapshot.tasks)
    for task_id, n in counts.items():
        if n > 1:
            found.append(Violation(task_id, Invariant.DUPLICATE_ID, f"{n} tasks share the id"))
    by_id = {t.id: t for t in snapshot.tasks}
    for task in snapshot.tasks:
        found.extend(_task(task, by_id))
    found.extend(_cycles(snapshot.tasks, by_id))
    return tuple(found)


def _task(task: Task, by_id: dict[str, Task]) -> list[Violation]:
    found: list[Violation] = []

    def add(rule: Invariant, detail: str) -> None:
        found.append(Violation(task.id, rule, detail))

    missing = [d for d in task.depends_on if d not in by_id]
    if missing:
        add(Invariant.MISSING_DEPENDENCY, f"depends on unknown {missing}")
    if task.status is Status.CLAIMED:
        if task.lease is None or not task.owner or task.lease.owner != task.owner:
            add(Invariant.CLAIM_WITHOUT_LEASE, f"claimed by {task.owner!r} with lease {task.lease}")
        unfinished = [
            d for d in task.depends_on if d in by_id and by_id[d].status is not Status.DONE
        ]
        if unfinished:
            add(Invariant.CLAIMED_WHILE_BLOCKED, f"claimed while {unfinished} are not done")
        return found
    if task.lease is not None:
        add(Invariant.LEASE_WITHOUT_CLAIM, f"{task.status} but carries a lease")
    if task.owner:
        rule = (
            Invariant.TERMINAL_WITH_OWNER if task.status.terminal else Invariant.OWNER_WITHOUT_CLAIM
        )
        add(rule, f"{task.status} but owned by {task.owner!r}")
    return found


def _cycles(tasks: tuple[Task, ...], by_id: dict[str, Task]) -> list[Violation]:
    """One violation per task on a dependency cycle: a task in a strongly connected component
    of more than one task, or depending on itself (Tarjan's algorithm, iterative)."""
    graph = {i: [d for d in t.depends_on if d in by_id] for i, t in by_id.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    on_cycle: set[str] = set()
    for root in graph:
        if root in index:
            continue
        work: list[tuple[str, int]] = [(root, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = len(index)
                stack.append(node)
                on_stack.add(node)
            if i < len(graph[node]):
                work.append((node, i + 1))
                nxt = graph[node][i]
                if nxt not in index:
                    work.append((nxt, 0))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1 or node in graph[node]:
                    on_cycle.update(component)
    return [
        Violation(t.id, Invariant.DEPENDENCY_CYCLE, "lies on a dependency cycle")
        for t in tasks
        if t.id in on_cycle and by_id[t.id] is t
    ]
