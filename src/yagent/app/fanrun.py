"""Running a checked parallel plan (`app.fanout`), and resuming one a crash or Ctrl-C cut short.

Contract:
- `run_parallel(services, plan)` creates ONE session (its meta keeps the plan, so the run can be
  resumed) and runs each task as its own agent run in it, at most `max_parallel` at once, each
  with its own delegation id (`<name>@<session prefix>`: on its events, messages, run record and
  side-effect keys) and its own `Lane`. Each run becomes a `kernel.judge.delegate` receipt:
  completed (the run finished or answered; output = its deliverable, neutralised by
  `untrusted.deliverable`: it was written from untrusted tool output), failed (any other end, or an
  exception — which never reaches the other tasks), refused. Cancellation still stops them all.
- Each task runs through `app.lanerun.run_lane` (shared with the Director's delegations).
- Events: `delegation_start` as a task starts, the sub-run's own `run_end` (published here when
  the run died before its loop could), a `delegation_receipt` once the task is decided (what a
  resume trusts), then one top-level `run_end` carrying every receipt (status finished when all
  completed, else error).
- `resume_plan(services, session_id)` re-checks the stored plan exactly as a new one (`prepare`) and
  says, per task, what `resume_parallel` will do: a completed (or refused) receipt is kept — the
  task is NOT run again; an interrupted run continues from its checkpoint (`app.durable.decide`:
  calls a dead process left open are settled first, never re-run) — also when its receipt says
  failed but the failure only interrupted the run (a model error, a timeout); a failed task
  whose run concluded (its step budget spent) is kept; a run that concluded before its receipt
  was recorded gets its receipt from its `run_end` event; a task that never started starts. A
  session that is not a parallel run with a stored plan is a `FanoutError`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import anyio

from yagent.app.durable import Action, ResumeDecision
from yagent.app.fanout import Assignment, FanoutError, ParallelRun, Plan, Task, TaskReceipt, prepare
from yagent.app.lane import Lane
from yagent.app.lanerun import run_lane
from yagent.app.opensession import OpenSession
from yagent.app.runtrack import continuation_task
from yagent.app.services import ParallelServices
from yagent.app.stopkind import StopKind, stop_kind_of
from yagent.kernel.judge import delegate

RECEIPT_EVENT = "delegation_receipt"

Work = Plan | Sequence[Assignment]


def delegation_id(name: str, session_id: str) -> str:
    return f"{name}@{session_id[:8]}"


async def run_parallel(
    services: ParallelServices, work: Work, *, max_parallel: int | None = None
) -> ParallelRun:
    """Run the plan's tasks concurrently in one new session; one receipt per task, in order."""
    plan = (
        work if isinstance(work, Plan) else await prepare(services, work, max_parallel=max_parallel)
    )
    names = [t.assignment.name for t in plan.tasks]
    info = services.store.create_session(
        workspace=str(services.workspace),
        title=("parallel: " + ", ".join(names))[:80],
        model=services.engine.model,
        meta={
            "parallel": names,
            "plan": [dataclasses.asdict(t.assignment) for t in plan.tasks],
            "max_parallel": plan.max_parallel,
        },
    )
    return await execute(services, info.id, plan)


async def execute(
    services: ParallelServices,
    session_id: str,
    plan: Plan,
    *,
    kept: Mapping[str, TaskReceipt] | None = None,
    resumes: Mapping[str, ResumeDecision] | None = None,
) -> ParallelRun:
    """Run the plan's tasks in `session_id`, except those `kept`; `resumes` continue runs."""
    kept, resumes = kept or {}, resumes or {}
    names = [t.assignment.name for t in plan.tasks]
    out: list[TaskReceipt] = [kept[n] for n in names if n in kept]
    limiter = anyio.CapacityLimiter(plan.max_parallel)
    with services.sessions.held(session_id) as session, services.observed(session):
        async with anyio.create_task_group() as tg:
            for task in plan.tasks:
                name = task.assignment.name
                if name in kept:
                    continue
                lane = Lane(name, delegation_id(name, session_id), task.declaration, task.commands)
                tg.start_soon(
                    _run_one, services, session, task, lane, limiter, out, resumes.get(name)
                )
        ordered = tuple(sorted(out, key=lambda r: names.index(r.name)))
        failed = [f"{r.name} ({r.receipt.status.value})" for r in ordered if not r.receipt.ok]
        error = f"{len(failed)} of {len(ordered)} tasks did not complete: " + ", ".join(failed)
        session.publish(
            "run_end",
            {
                "agent": "parallel",
                "delegation_id": "",
                "status": "error" if failed else "finished",
                "steps": 0,
                "error": error if failed else "",
                "note": "",
                "receipts": [r.to_dict() for r in ordered],
            },
        )
    services.store.set_status(session_id, "failed" if failed else "finished")
    return ParallelRun(session_id, ordered)


async def _run_one(
    services: ParallelServices,
    session: OpenSession,
    task: Task,
    lane: Lane,
    limiter: anyio.CapacityLimiter,
    out: list[TaskReceipt],
    resume: ResumeDecision | None,
) -> None:
    async with limiter:
        text = task.assignment.task if resume is None else continuation_task(resume)
        ran = await run_lane(
            services,
            session,
            lane,
            executor=task.executor,
            required=task.required,
            task=task.assignment.task,
            text=text,
            resume=resume,
            start={"parent_delegation_id": "", "call_id": ""},
        )
        done = TaskReceipt(lane.name, lane.delegation_id, ran.receipt, ran.run_status)
        base = {"agent": task.executor.name, "delegation_id": lane.delegation_id}
        session.publish(RECEIPT_EVENT, {**base, "receipt": done.to_dict()})
        out.append(done)


# -- resuming -----------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class ResumeWork:
    """What resuming a parallel session will do, per task, before anything runs."""

    session_id: str
    plan: Plan
    kept: Mapping[str, TaskReceipt]
    resumes: Mapping[str, ResumeDecision]
    lines: tuple[str, ...]  # one per task, for the person


async def resume_plan(
    services: ParallelServices, session_id: str, *, max_parallel: int | None = None
) -> ResumeWork:
    """The stored plan re-checked, and each task's fate (see the module contract)."""
    try:
        info = services.store.get_session(session_id)
    except LookupError as exc:  # no such session, or an ambiguous prefix
        raise FanoutError(str(exc)) from None
    stored = info.meta.get("plan")
    if not isinstance(stored, list) or not stored:
        raise FanoutError(f"session {info.id[:12]} is not a parallel run with a stored plan")
    try:
        assignments = [assignment_of(a) for a in stored]
    except (TypeError, ValueError) as exc:
        raise FanoutError(f"session {info.id[:12]}: its stored plan is unreadable: {exc}") from None
    limit = max_parallel or int(info.meta.get("max_parallel") or 0) or None
    plan = await prepare(services, assignments, max_parallel=limit)
    recorded = _recorded_receipts(services, info.id)
    kept: dict[str, TaskReceipt] = {}
    resumes: dict[str, ResumeDecision] = {}
    lines = []
    for task in plan.tasks:
        name = task.assignment.name
        did = delegation_id(name, info.id)
        before = recorded.get(name)
        if before is not None and before.receipt.status is not delegate.Status.FAILED:
            kept[name] = before
            lines.append(f"{name}: {before.receipt.status.value} before — kept, not run")
            continue
        decision = await services.durable.decide(info.id, did)
        if decision.action is Action.CONTINUE:  # also a failure that only interrupted the run
            resumes[name] = decision
            failed = "failed before; " if before is not None else ""
            lines.append(f"{name}: {failed}{decision.describe()}")
        elif before is not None:
            kept[name] = before
            lines.append(f"{name}: failed before, its run concluded — kept, not run")
        elif decision.run is not None:
            kept[name] = _from_run_end(services, info.id, task, did)
            lines.append(f"{name}: concluded before ({kept[name].run_status}) — kept, not run")
        else:
            lines.append(f"{name}: never started — starts now")
    return ResumeWork(info.id, plan, kept, resumes, tuple(lines))


async def resume_parallel(services: ParallelServices, work: ResumeWork) -> ParallelRun:
    return await execute(services, work.session_id, work.plan, kept=work.kept, resumes=work.resumes)


def assignment_of(raw: object) -> Assignment:
    """One task of a plan stored in a session's meta (`TypeError` when it is not one)."""
    if not isinstance(raw, dict):
        raise TypeError(f"a task is {type(raw).__name__}, not a table")

    def words(key: str) -> tuple[str, ...]:
        value = raw.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise TypeError(f"{key} is not a list of strings")
        return tuple(value)

    name, task, agent = raw.get("name"), raw.get("task"), raw.get("agent", "")
    if not all(isinstance(v, str) for v in (name, task, agent)):
        raise TypeError("name, task and agent must be strings")
    return Assignment(
        str(name), str(task), str(agent), words("capabilities"), words("write"), words("read")
    )


def _recorded_receipts(services: ParallelServices, session_id: str) -> dict[str, TaskReceipt]:
    found: dict[str, TaskReceipt] = {}
    for event in services.store.events(session_id, types=RECEIPT_EVENT):
        data = event.payload.get("receipt")
        if not isinstance(data, dict):
            continue
        try:
            receipt = delegate.Receipt(
                delegate.Status(str(data["status"])),
                str(data.get("agent") or ""),
                str(data.get("output") or ""),
                str(data.get("reason") or ""),
            )  # its invariants are checked again: a tampered receipt is not trusted
        except (KeyError, ValueError, delegate.DelegateError):
            continue  # unreadable: the task is judged from its run record instead
        name = str(data.get("name", ""))
        did = str(data.get("delegation_id", ""))
        found[name] = TaskReceipt(name, did, receipt, str(data.get("run_status") or ""))
    return found


def _from_run_end(services: ParallelServices, session_id: str, task: Task, did: str) -> TaskReceipt:
    ends = services.store.events(session_id, types="run_end", delegation_id=did)
    status = str(ends[-1].payload.get("status", "")) if ends else ""
    name, agent = task.assignment.name, task.executor.name
    if stop_kind_of(status, unknown=StopKind.FAILED).delivered:
        output = "(concluded before the parallel run was interrupted; see the session)"
        receipt = delegate.Receipt.completed(agent, output)
    else:
        why = f"Unfinished: the run ended {status or 'without a recorded end'}"
        receipt = delegate.Receipt.failed(agent, why)
    return TaskReceipt(name, did, receipt, status)
