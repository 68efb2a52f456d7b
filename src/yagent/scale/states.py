"""What a batch's tasks are doing, in one vocabulary for both engines.

A task is `pending` (not started), `running`, or final: `completed` (its agent run finished or
answered), `failed` (anything else, said in `detail`) or `cancelled`. `Summary` counts them; a batch
is done when every task is final.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

PENDING, RUNNING = "pending", "running"
COMPLETED, FAILED, CANCELLED = "completed", "failed", "cancelled"
FINAL = frozenset({COMPLETED, FAILED, CANCELLED})


@dataclass(frozen=True, slots=True)
class TaskState:
    id: str
    state: str
    detail: str = ""

    def to_dict(self) -> dict[str, str]:
        return {"id": self.id, "state": self.state, "detail": self.detail}


def counts(states: Sequence[TaskState]) -> dict[str, int]:
    out = dict.fromkeys((PENDING, RUNNING, COMPLETED, FAILED, CANCELLED), 0)
    for task in states:
        out[task.state] = out.get(task.state, 0) + 1
    return out


def done(states: Sequence[TaskState]) -> bool:
    return all(t.state in FINAL for t in states)
