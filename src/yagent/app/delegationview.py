"""What a delegation hands back: the outcome, as the board keeps it, and its one rendering.

Contract:
- An `Outcome` is a delegation's end: completed, failed or refused (a `kernel.judge.delegate`
  receipt keeps those invariants), or paused (the run stopped at a pause the person abandoned: not a
  failure, and it carries no note). `output` is the child's deliverable, verbatim as neutralised
  by `untrusted.deliverable`; when the child answered in plain text instead of `agent_exit`, the
  output is its last reply and `submitted` is False with the loop's no-submission note.
- `to_board()` / `from_board(task)`: the outcome is stored as the board task's result (done) or
  reason (failed), and read back from it — a receipt is a view of the board; a board row that is
  not one of ours reads as None, never as a made-up outcome.
- What the child's work proves travels beside the deliverable, never inside it (Director
  constraints C15, C16): `evidence` (the files its run really touched or found,
  `app.evidence`) and `blueprint` (the blueprint fold's account line, `app.blueprint`).
- `format_for_director(outcome)` is the only renderer of a delegation result for the model that
  delegated (every path — ran, refused, timed out, resumed, degraded — goes through it): a
  header line (delegation id, agent, status), the notes, the evidence and blueprint lines, then
  the reason or the deliverable under its own marker line (so nothing above it is part of it).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from yagent.kernel.durable import taskboard
from yagent.kernel.judge import delegate

PAUSED = "paused"


@dataclass(frozen=True, slots=True)
class Outcome:
    delegation_id: str
    agent: str
    call_id: str
    status: str  # completed | failed | refused | paused
    output: str = ""
    reason: str = ""
    run_status: str = ""  # how the child's run ended ("" when it never ran)
    submitted: bool = False  # the output came through agent_exit
    notes: tuple[str, ...] = field(default=())
    evidence: tuple[str, ...] = field(default=())  # workspace-relative files, sorted
    blueprint: str = ""  # the blueprint fold's account line ("" when nothing was offered)

    @classmethod
    def of(
        cls,
        receipt: delegate.Receipt,
        *,
        delegation_id: str,
        call_id: str,
        run_status: str = "",
        submitted: bool = False,
        notes: tuple[str, ...] = (),
    ) -> Outcome:
        return cls(
            delegation_id,
            receipt.executor,
            call_id,
            receipt.status.value,
            receipt.output,
            receipt.reason,
            run_status,
            submitted,
            notes,
        )

    @property
    def ok(self) -> bool:
        return self.status == delegate.Status.COMPLETED.value

    def to_dict(self) -> dict[str, Any]:
        return {
            "delegation_id": self.delegation_id,
            "agent": self.agent,
            "call_id": self.call_id,
            "status": self.status,
            "output": self.output,
            "reason": self.reason,
            "run_status": self.run_status,
            "submitted": self.submitted,
            "notes": list(self.notes),
            "evidence": list(self.evidence),
            "blueprint": self.blueprint,
        }

    def to_board(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False)


def from_board(task: taskboard.Task) -> Outcome | None:
    """The outcome a finished board task records (None: not one, or unreadable)."""
    if task.status not in (taskboard.Status.DONE, taskboard.Status.FAILED):
        return None
    try:
        data = json.loads(task.result)
        notes = data.get("notes") or []
        outcome = Outcome(
            str(data["delegation_id"]),
            str(data["agent"]),
            str(data.get("call_id") or ""),
            str(data["status"]),
            str(data.get("output") or ""),
            str(data.get("reason") or ""),
            str(data.get("run_status") or ""),
            bool(data.get("submitted")),
            tuple(str(n) for n in notes),
            tuple(str(f) for f in data.get("evidence") or ()),
            str(data.get("blueprint") or ""),
        )
        if outcome.status != PAUSED:  # a receipt's invariants are checked again: not trusted
            delegate.Receipt(
                delegate.Status(outcome.status), outcome.agent, outcome.output, outcome.reason
            )
    except (ValueError, KeyError, TypeError, AttributeError, delegate.DelegateError):
        return None
    done = task.status is taskboard.Status.DONE
    return outcome if done == outcome.ok else None


def format_for_director(outcome: Outcome) -> str:
    """The text the delegating model reads for one delegation (see the module contract)."""
    lines = [
        f"delegation {outcome.delegation_id} ({outcome.agent or 'no agent'}): {outcome.status}"
    ]
    if outcome.run_status:
        lines[0] += f" — its run ended {outcome.run_status}"
    lines += [f"note: {note}" for note in outcome.notes]
    if outcome.evidence:
        lines.append(f"evidence: {', '.join(outcome.evidence)}")
    if outcome.blueprint:
        lines.append(outcome.blueprint)
    if outcome.status == PAUSED:
        lines.append("the delegation was paused; nothing about its result is known yet")
    elif outcome.reason:
        lines.append(f"reason: {outcome.reason}")
    if outcome.output:
        head = "deliverable (verbatim)" if outcome.submitted else "last reply (not a submission)"
        lines += [f"--- {head} ---", outcome.output]
    return "\n".join(lines)
