"""The four steps of a batch task — prepare, run, collect, clean up — whatever engine drives them.

Each step returns a `kernel.durable.contract.StepOutcome` (run id = the task's key, step id = the
step's name, status = `done`, or the step's own word: the run step's status is the loop's), so the
local engine and Temporal's activities report one vocabulary; `outcome_dict` / `outcome_of` carry
it across an engine's wire.

Contract:
- `prepare` makes the task's checkout `<work>/<batch>/<task>` (`scale.checkout`: idempotent), its
  digest is the base commit.
- `run_agent` opens the app (`app.assemble.open_app`: whatever stores the home's configuration
  opens — nothing here assumes SQLite) on the checkout, unattended (`-y`, not interactive), and
  runs the task in the task's session: the session registered under the task's key
  (`SessionStore.keyed_session`: created the first time, found by an indexed read on a retry, by
  whichever worker shares the store) — so an attempt after a crash or a lost worker finds the
  run's checkpoint. Then `app.durable.decide` says what to do: an interrupted run CONTINUES from its
  checkpoint (calls the dead attempt left open are settled first, a side effect whose outcome is
  unknown is reported uncertain and never repeated); a concluded run is NOT run again (its
  `run_end` is the outcome); no run yet starts one. `beat(kind)` is called on every event the run
  publishes (the moments the loop's activity monitor is renewed) — the engine's heartbeat. Write
  areas become the run's lane (`app.fanout`: a sandboxed preset is required; refused otherwise).
- The run step's detail carries, read from the app's store while it is open: the session id,
  the resume decision, the report (the deliverable, else the last text), the trace (the session's
  events, compact, the last `TRACE_LIMIT`), usage, and every call settled uncertain.
- The run step's detail also carries the checkout's base commit and `fresh_checkout` (this attempt
  made the checkout: work an earlier attempt left on another machine is not in it).
  `with_patch` puts the checkout's patch into it, where the run ran (for engines whose steps may
  land on different machines).
- `with_push` (a task with a push, `scale.push`) commits and pushes the checkout's changes after a
  run that completed, in the batch's step, where the run ran — never from the sandbox — and puts
  the push's fields (`pushed`, `branch`, `commit`, `remote`, `push_note` / `push_error`) into its
  detail; a run that did not complete pushes nothing and says so.
- `collect` adds the patch (`git diff` against the base, at most `PATCH_LIMIT` characters, cut
  visibly; read from the checkout unless the run's detail carries it) and the task's status:
  `completed` when the loop finished or answered, else `failed` — also when the run had
  concluded in an earlier attempt and this attempt's checkout is fresh (its changes, and so its
  patch, stayed on the lost machine: said in `error`, never an empty patch passed off as done).
- `cleanup` removes the checkout.
Leaves to the engines: retries, timeouts, parallelism, where results are kept.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import anyio.to_thread

from yagent.app.assemble import App, open_app
from yagent.app.config import load
from yagent.app.durable import Action
from yagent.app.fanout import Assignment, FanoutError, prepare
from yagent.app.lane import Lane
from yagent.app.runtrack import continuation_task
from yagent.kernel.durable.contract import StepOutcome
from yagent.messaging import Event
from yagent.scale import checkout, push
from yagent.scale.tasks import TaskSpec
from yagent.tools.yolo import Yolo

DONE = "done"
FAILED = "failed"
REFUSED = "refused"
COMPLETED = ("finished", "answered")  # loop statuses that complete a task
PATCH_LIMIT = 1_000_000  # characters of patch kept in a result; more is cut, visibly
TRACE_LIMIT = 2_000  # events of the trace kept (the last ones); more is cut, visibly
_TRACE_KEYS = ("name", "tool", "call_id", "outcome", "status", "agent", "error")


def outcome_dict(outcome: StepOutcome) -> dict[str, str]:
    return dataclasses.asdict(outcome)


def outcome_of(raw: Mapping[str, Any]) -> StepOutcome:
    text = {k: str(raw.get(k, "")) for k in ("run_id", "step_id", "status", "digest", "detail")}
    return StepOutcome(**text)


def checkout_dir(work: Path, key: str) -> Path:
    return work.joinpath(*key.split("/"))


async def prepare_step(work: Path, key: str, spec: TaskSpec) -> StepOutcome:
    dest = checkout_dir(work, key)
    try:
        base = await anyio.to_thread.run_sync(checkout.prepare, spec.repo, spec.ref, dest)
    except checkout.CheckoutError as exc:
        return StepOutcome(key, "prepare", FAILED, detail=str(exc))
    return StepOutcome(key, "prepare", DONE, digest=base, detail=str(dest))


async def run_agent(
    home: Path, work: Path, key: str, spec: TaskSpec, beat: Callable[[str], None]
) -> StepOutcome:
    """The agent run (see the module contract); `detail` is a JSON object about it."""
    dest = checkout_dir(work, key)
    fresh = not dest.exists()
    base = await anyio.to_thread.run_sync(checkout.prepare, spec.repo, spec.ref, dest)
    config = load(home=home, workspace=dest)
    async with open_app(
        config, home=home, workspace=dest, yolo=Yolo.YOLO, interactive=False
    ) as app:
        app.observers.append(lambda event: beat(event.type))
        # no display reads this run's events (the session's log keeps them): nothing is queued
        # for one, so nothing fills its queue and warns of drops
        app.dispatcher.write_through(_unshown)
        sid = task_session(app, key, spec)
        try:
            lane = await _lane(app, spec, sid)
        except FanoutError as exc:  # the write areas cannot be confined: refused, nothing ran
            refused = {"session_id": sid, "error": str(exc), "report": ""}
            return StepOutcome(key, "run", REFUSED, detail=json.dumps(refused))
        delegation = lane.delegation_id if lane else ""
        decision = await app.durable.decide(sid, delegation)
        about: dict[str, Any] = {"session_id": sid, "base": base, "fresh_checkout": fresh}
        if decision.run is not None:
            about["decision"] = decision.describe()
        if decision.action is Action.CONTINUE and decision.run is not None:
            about["resumed"] = True
            text, resume = continuation_task(decision), decision
        elif decision.run is not None:  # concluded before: never run again
            ends = app.store.events(sid, types="run_end", delegation_id=delegation)
            status = str(ends[-1].payload.get("status", "")) if ends else "error"
            about |= {"kept": True, "report": f"(concluded in an earlier attempt: session {sid})"}
            return StepOutcome(key, "run", status, detail=json.dumps(about | _record(app, sid)))
        else:
            text, resume = spec.task, None
        try:
            _, result = await app.run(
                text, agent_name=spec.agent or None, session_id=sid, resume=resume, lane=lane
            )
        finally:
            with anyio.CancelScope(shield=True):
                await app.end_jobs()
        about |= {
            "steps": result.steps,
            "error": result.error or result.note,
            "report": result.best_text(),
        }
        return StepOutcome(
            key, "run", result.status.value, detail=json.dumps(about | _record(app, sid))
        )


def _unshown(event: Event) -> None:
    """The writer of a run nobody watches (`run_agent`)."""


def _record(app: App, sid: str) -> dict[str, Any]:
    """The run's trace (its events, compact), usage and side effects settled uncertain."""
    trace: list[dict[str, str]] = []
    uncertain: list[dict[str, str]] = []
    for event in app.store.events(sid):
        p = event.payload
        trace.append({"type": event.type} | {k: str(p[k]) for k in _TRACE_KEYS if k in p})
        if event.type == "tool_settled" and p.get("outcome") == "uncertain":
            uncertain.append({"call_id": str(p.get("call_id", "")), "tool": str(p.get("tool"))})
    totals = app.store.usage(sid)
    usage = {
        "calls": totals.calls,
        "input_tokens": totals.input_tokens,
        "output_tokens": totals.output_tokens,
        "cost": totals.cost,
    }
    cut = len(trace) > TRACE_LIMIT
    return {
        "trace": trace[-TRACE_LIMIT:],
        "trace_truncated": cut,
        "usage": usage,
        "uncertain": uncertain,
    }


def leaves(exc: BaseException) -> str:
    """What went wrong, with the exception groups of task groups unwrapped."""
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(leaves(e) for e in exc.exceptions)
    return f"{type(exc).__name__}: {exc}"


def task_session(app: App, key: str, spec: TaskSpec) -> str:
    """The task's session: registered under `batch:<key>` the first time, found by it (one
    indexed read, atomic get-or-create) on a retry — by any worker on the same store."""
    agent = app.agent(spec.agent or app.config.agent.default)
    info, _ = app.store.keyed_session(
        f"batch:{key}",
        workspace=str(app.workspace),
        title=spec.task[:80],
        model=agent.model or app.engine.model,
        meta={"agent": agent.name, "batch_task": key},
    )
    return info.id


async def _lane(app: App, spec: TaskSpec, session_id: str) -> Lane | None:
    if not spec.write:
        return None
    plan = await prepare(app, [Assignment(spec.id, spec.task, spec.agent, write=spec.write)])
    task = plan.tasks[0]
    return Lane(spec.id, f"{spec.id}@{session_id[:8]}", task.declaration, task.commands)


async def with_patch(work: Path, key: str, run: StepOutcome) -> StepOutcome:
    """The run's outcome with its checkout's patch in its detail, taken where the run ran (an
    engine whose steps may land on other machines calls this in the run's own step)."""
    about = json.loads(run.detail) if run.detail.startswith("{") else {}
    base = str(about.get("base", ""))
    if not base:  # refused before a checkout: no patch
        return run
    text = await anyio.to_thread.run_sync(checkout.patch, checkout_dir(work, key), base)
    about |= _patch_fields(text)
    return dataclasses.replace(run, detail=json.dumps(about))


async def with_push(work: Path, key: str, spec: TaskSpec, run: StepOutcome) -> StepOutcome:
    """The run's outcome with its push's fields in its detail (see the module contract)."""
    about = json.loads(run.detail) if run.detail.startswith("{") else {}
    base = str(about.get("base", ""))
    if not spec.push_branch or not base:  # no push asked, or refused before a checkout
        return run
    if run.status not in COMPLETED:
        about |= {
            "pushed": False,
            "branch": spec.push_branch,
            "push_note": f"the run did not complete ({run.status}): nothing pushed",
        }
    else:
        about |= await anyio.to_thread.run_sync(
            lambda: push.publish(
                checkout_dir(work, key),
                base,
                remote=spec.push_remote,
                branch=spec.push_branch,
                repo=spec.repo,
                title=spec.task,
                key=key,
            )
        )
    return dataclasses.replace(run, detail=json.dumps(about))


def _patch_fields(text: str) -> dict[str, Any]:
    return {
        "patch": text[:PATCH_LIMIT],
        "patch_truncated": len(text) > PATCH_LIMIT,
        "patch_sha256": hashlib.sha256(text.encode()).hexdigest(),
    }


async def collect(work: Path, key: str, base: str, run: StepOutcome) -> dict[str, Any]:
    """The task's result (see the module contract); JSON-ready."""
    about = json.loads(run.detail) if run.detail.startswith("{") else {}
    base = str(about.pop("base", "") or base)
    if "patch_sha256" not in about:  # the checkout is here: read its patch now
        text = await anyio.to_thread.run_sync(checkout.patch, checkout_dir(work, key), base)
        about |= _patch_fields(text)
    status = "completed" if run.status in COMPLETED else FAILED
    if about.get("kept") and about.get("fresh_checkout"):  # its changes stayed where it ran
        status = FAILED
        about["error"] = (
            "the run concluded on a worker lost before its result was collected; its checkout "
            "(and its patch) stayed on that worker"
        )
    return {
        "key": key,
        "status": status,
        "run_status": run.status,
        "base": base,
        "resumed": bool(about.pop("resumed", False)),
    } | about


def cleanup(work: Path, key: str) -> StepOutcome:
    checkout.remove(checkout_dir(work, key))
    return StepOutcome(key, "cleanup", DONE)
