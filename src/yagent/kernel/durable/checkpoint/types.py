"""checkpoint value types: the plan a run follows and the progress snapshots it leaves.

Contract:
- A plan is a sequence of `StepDef`s listed so that every dependency comes before its dependant
  (so dependencies can never form a cycle). `depends_on` and `isolated` both at their zero value
  mean "this step trusts only a complete prefix", the strict behaviour; `isolated` (trusts no
  predecessor) and a non-empty `depends_on` together are a contradiction and refused.
- A `RunProgress` is one run's progress at one `seq`: the run's state and each recorded step's
  status. A COMPLETED step carries the digest of its result and only it does: a completion with
  no digest could not be checked against what the step produced.
- Values are immutable and validated on construction; `encode`/`decode` give the one storage
  form every store uses, and `decode` refuses anything it cannot read back exactly.
"""

from __future__ import annotations

import enum
import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from yagent.kernel.durable.checkpoint.errors import InvalidArgumentError, PlanError


class StepStatus(enum.StrEnum):
    PENDING = "pending"
    RUNNING = "running"  # at resume: the step was interrupted and its outcome is unknown
    COMPLETED = "completed"
    FAILED = "failed"


class RunState(enum.StrEnum):
    ACTIVE = "active"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELLED = "cancelled"

    @property
    def terminal(self) -> bool:
        return self is not RunState.ACTIVE


def _text(what: str, value: object) -> str:
    if not isinstance(value, str) or not value:
        raise InvalidArgumentError(f"checkpoint: {what} must be a non-empty string, got {value!r}")
    return value


def digest(result: bytes) -> str:
    """The digest a COMPLETED step records for its result bytes."""
    if not isinstance(result, bytes):
        raise InvalidArgumentError(f"checkpoint: result must be bytes, got {type(result).__name__}")
    return "sha256:" + hashlib.sha256(result).hexdigest()


@dataclass(frozen=True, slots=True)
class StepDef:
    """One step of a plan and whose completion it needs before its own can be trusted."""

    id: str
    depends_on: tuple[str, ...] = ()
    isolated: bool = False

    def __post_init__(self) -> None:
        _text("step id", self.id)
        if isinstance(self.depends_on, str) or not isinstance(self.depends_on, Iterable):
            raise PlanError(f"checkpoint: depends_on of {self.id!r} must be a sequence of ids")
        deps = tuple(self.depends_on)
        for dep in deps:
            _text(f"dependency of {self.id!r}", dep)
        object.__setattr__(self, "depends_on", deps)
        if not isinstance(self.isolated, bool):
            raise PlanError(f"checkpoint: isolated of {self.id!r} must be a bool")
        if self.isolated and deps:
            raise PlanError(f"checkpoint: {self.id!r} is isolated and has dependencies")
        if self.id in deps or len(set(deps)) != len(deps):
            raise PlanError(f"checkpoint: {self.id!r} lists itself or a dependency twice")


def validate_plan(plan: Iterable[StepDef]) -> tuple[StepDef, ...]:
    """The plan as a tuple; refuses duplicate ids and dependencies not listed earlier."""
    seen: set[str] = set()
    steps = tuple(plan)
    for step in steps:
        if not isinstance(step, StepDef):
            raise PlanError(f"checkpoint: plan entries must be StepDef, got {step!r}")
        if step.id in seen:
            raise PlanError(f"checkpoint: step {step.id!r} appears twice in the plan")
        later = [d for d in step.depends_on if d not in seen]
        if later:
            raise PlanError(
                f"checkpoint: {step.id!r} depends on {later}, not listed before it in the plan"
            )
        seen.add(step.id)
    return steps


@dataclass(frozen=True, slots=True)
class StepRecord:
    """A step's recorded progress; `digest` is set exactly when the step COMPLETED."""

    id: str
    status: StepStatus
    digest: str = ""
    detail: str = ""

    def __post_init__(self) -> None:
        _text("step id", self.id)
        if not isinstance(self.status, StepStatus):
            raise InvalidArgumentError(
                f"checkpoint: status must be a StepStatus, got {self.status!r}"
            )
        if not isinstance(self.digest, str) or not isinstance(self.detail, str):
            raise InvalidArgumentError("checkpoint: digest and detail must be strings")
        if (self.status is StepStatus.COMPLETED) != bool(self.digest):
            raise InvalidArgumentError(
                f"checkpoint: step {self.id!r} is {self.status}: a digest goes with COMPLETED only"
            )


@dataclass(frozen=True, slots=True)
class RunProgress:
    """A run's progress at `seq`. Seq 0 is a valid value but never a saved commit."""

    run_id: str
    seq: int
    state: RunState
    steps: tuple[StepRecord, ...] = ()

    def __post_init__(self) -> None:
        _text("run id", self.run_id)
        if isinstance(self.seq, bool) or not isinstance(self.seq, int) or self.seq < 0:
            raise InvalidArgumentError(f"checkpoint: seq must be an int >= 0, got {self.seq!r}")
        if not isinstance(self.state, RunState):
            raise InvalidArgumentError(f"checkpoint: state must be a RunState, got {self.state!r}")
        steps = tuple(self.steps)
        if not all(isinstance(s, StepRecord) for s in steps):
            raise InvalidArgumentError("checkpoint: steps must be StepRecords")
        ids = [s.id for s in steps]
        if len(set(ids)) != len(ids):
            raise InvalidArgumentError(f"checkpoint: a step is recorded twice in {ids}")
        object.__setattr__(self, "steps", steps)

    def step(self, step_id: str) -> StepRecord | None:
        return next((s for s in self.steps if s.id == step_id), None)


def encode(snapshot: RunProgress) -> str:
    """The storage form of a snapshot's steps (run id, seq and state are stored as columns)."""
    return json.dumps(
        [[s.id, s.status.value, s.digest, s.detail] for s in snapshot.steps],
        ensure_ascii=False,
        separators=(",", ":"),
    )


def decode(run_id: str, seq: int, state: str, steps: str) -> RunProgress:
    """Rebuild a stored snapshot; raises `InvalidArgumentError` (or ValueError) on anything odd."""
    raw: Any = json.loads(steps)
    if not isinstance(raw, list):
        raise InvalidArgumentError("checkpoint: stored steps are not a list")
    records: Sequence[StepRecord] = [_record(item) for item in raw]
    return RunProgress(run_id, seq, RunState(state), tuple(records))


def _record(item: object) -> StepRecord:
    if not isinstance(item, list) or len(item) != 4:
        raise InvalidArgumentError(f"checkpoint: unreadable stored step {item!r}")
    step_id, status, dig, detail = item
    return StepRecord(step_id, StepStatus(status), dig, detail)
