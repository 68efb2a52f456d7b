"""checkpoint resume: the pure decision "continue, not replay", and the monotonic sequence gate.

`decide(run_id, plan, snapshot)` reads only its arguments. Its rules:
- No snapshot: START — run the whole plan.
- A snapshot of another run, or one recording steps the plan does not know: MISMATCH — nothing is
  trusted and nothing is scheduled; the plan changed under the run and only the host can say what
  the old results mean. Guessing either way (replay all, skip all) is the failure this prevents.
- A terminal run state: TERMINAL — never reopened automatically. To reopen, the host commits an
  ACTIVE snapshot on purpose (through its `Committer`), after which `decide` says CONTINUE.
- Otherwise CONTINUE: a COMPLETED step is *trusted* (its recorded result is reused) when
  · it is `isolated`; or
  · it declares `depends_on` and every one of those steps is trusted; or
  · it declares neither (the zero value) and every step before it in the plan is trusted — the
    strict prefix: a completion recorded after a hole is not trusted, since it may have consumed
    what the missing step would have produced.
  Every step not trusted is in `todo`, in plan order; `distrusted` names the completions thrown
  away, `interrupted` the steps recorded RUNNING (their effects may be half done: side effects
  go through `sideeffect`, which knows).
`SeqGate` admits strictly increasing sequence numbers and never 0.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass

from yagent.kernel.durable.checkpoint.errors import InvalidArgumentError, StaleSeqError
from yagent.kernel.durable.checkpoint.types import RunProgress, StepDef, StepStatus, validate_plan


class ResumeAction(enum.StrEnum):
    START = "start"
    CONTINUE = "continue"
    TERMINAL = "terminal"
    MISMATCH = "mismatch"


@dataclass(frozen=True, slots=True)
class Resume:
    """The resume decision; every list is in plan order (`unknown` in snapshot order)."""

    action: ResumeAction
    run_id: str
    seq: int
    trusted: tuple[str, ...]
    todo: tuple[str, ...]
    distrusted: tuple[str, ...] = ()
    interrupted: tuple[str, ...] = ()
    unknown: tuple[str, ...] = ()
    reason: str = ""


def decide(run_id: str, plan: Iterable[StepDef], snapshot: RunProgress | None) -> Resume:
    """What to do with `run_id` given its `plan` and its last saved snapshot (see module doc)."""
    steps = validate_plan(plan)
    ids = tuple(s.id for s in steps)
    if snapshot is None:
        return Resume(
            ResumeAction.START, run_id, 0, (), ids, reason="no snapshot: run the whole plan"
        )
    if snapshot.run_id != run_id:
        return Resume(
            ResumeAction.MISMATCH,
            run_id,
            snapshot.seq,
            (),
            (),
            reason=f"the snapshot belongs to run {snapshot.run_id!r}",
        )
    known = set(ids)
    unknown = tuple(s.id for s in snapshot.steps if s.id not in known)
    if unknown:
        return Resume(
            ResumeAction.MISMATCH,
            run_id,
            snapshot.seq,
            (),
            (),
            unknown=unknown,
            reason="the snapshot records steps the plan does not have",
        )
    trusted = _trusted(steps, snapshot)
    distrusted = tuple(
        i for i in ids if _status(snapshot, i) is StepStatus.COMPLETED and i not in trusted
    )
    interrupted = tuple(i for i in ids if _status(snapshot, i) is StepStatus.RUNNING)
    kept = tuple(i for i in ids if i in trusted)
    if snapshot.state.terminal:
        return Resume(
            ResumeAction.TERMINAL,
            run_id,
            snapshot.seq,
            kept,
            (),
            distrusted,
            interrupted,
            reason=f"the run is {snapshot.state}: never reopened automatically",
        )
    todo = tuple(i for i in ids if i not in trusted)
    return Resume(
        ResumeAction.CONTINUE,
        run_id,
        snapshot.seq,
        kept,
        todo,
        distrusted,
        interrupted,
        reason=f"{len(kept)} of {len(ids)} steps trusted",
    )


def _status(snapshot: RunProgress, step_id: str) -> StepStatus | None:
    record = snapshot.step(step_id)
    return None if record is None else record.status


def _trusted(steps: tuple[StepDef, ...], snapshot: RunProgress) -> set[str]:
    # One pass suffices: the plan lists every dependency before its dependant.
    trusted: set[str] = set()
    prefix = True
    for step in steps:
        ok = _status(snapshot, step.id) is StepStatus.COMPLETED and (
            step.isolated
            or (all(d in trusted for d in step.depends_on) if step.depends_on else prefix)
        )
        if ok:
            trusted.add(step.id)
        prefix = prefix and ok
    return trusted


class SeqGate:
    """Admits a run's snapshot sequence numbers only in strictly increasing order, never 0."""

    __slots__ = ("_last", "run_id")

    def __init__(self, run_id: str, last: int = 0) -> None:
        if isinstance(last, bool) or not isinstance(last, int) or last < 0:
            raise InvalidArgumentError(f"checkpoint: last seq must be an int >= 0, got {last!r}")
        self.run_id = run_id
        self._last = last

    @property
    def last(self) -> int:
        return self._last

    def admit(self, seq: int) -> None:
        """Raise `StaleSeqError` unless `seq` is above every seq admitted before; then admit it."""
        require_newer(self.run_id, seq, self._last or None)
        self._last = seq


def require_newer(run_id: str, seq: int, stored: int | None) -> None:
    """The one judgement of every store: seq 0 never, and nothing at or below the stored seq."""
    if seq == 0 or (stored is not None and seq <= stored):
        raise StaleSeqError(run_id, seq, stored)
