"""A lane — one Director delegation or one fan-out task — run by a worker of an engine: the job
that crosses the engine's wire, running it, and its `app.lanerun.LaneRun` back.

Contract:
- `job_of(...)` is JSON-ready: the delegator's workspace and session, the lane (name, delegation
  id, its areas as declared, depth, scope, call id), the agent, the task and the text to run.
- `run_job(home, job, beat)` opens the app on the job's workspace with this worker's home (its
  durable state must be the delegator's: one `[store] url` database; the workspace path must
  exist on the worker) and runs the lane in ITS OWN session, registered under
  `delegation:<session>/<delegation id>` (`SessionStore.keyed_session`; docs/adr/0022-remote-
  lanes-in-their-own-session.md): the delegator's process holds its own session's lease. The lane
  is rebuilt from the job (its declaration, its confined command gate, a link one level deeper
  for its own delegations), then `app.durable.decide`: an interrupted run CONTINUES from its
  checkpoint (a retry on another worker), a concluded one is NOT run again (reported failed,
  saying where its records are), none yet starts one — through `app.lanerun.run_lane`.
  `beat(kind)` is called on every event the run publishes (the engine's heartbeat).
- `lanerun_dict` / `lanerun_of` carry a `LaneRun` across the wire: the receipt, how the run
  ended, the fields of its result the delegator reads, and the session it ran in.
Leaves to the engine: where the job runs, retries, timeouts.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from yagent.agents.activity import Monitor
from yagent.agents.results import AgentResult, Status
from yagent.app.config import load
from yagent.app.delegationpool import Link, Pool, normalise
from yagent.app.durable import Action
from yagent.app.lane import Lane
from yagent.app.lanerun import LaneRun, run_lane
from yagent.app.runtrack import continuation_task
from yagent.kernel.judge import areas, delegate
from yagent.llm import Usage
from yagent.tools.yolo import Yolo

if TYPE_CHECKING:
    from yagent.app.assemble import App


def _areas(parts: tuple[tuple[str, ...], ...]) -> list[str]:
    return ["/".join(p) or "." for p in parts]


def job_of(
    app: App,
    session_id: str,
    lane: Lane,
    *,
    executor: delegate.Executor,
    task: str,
    text: str,
    start: Mapping[str, Any],
) -> dict[str, Any]:
    link = lane.link
    return {
        "workspace": str(app.workspace),
        "session_id": session_id,
        "name": lane.name,
        "delegation_id": lane.delegation_id,
        "write": _areas(lane.declaration.writable),
        "read": _areas(lane.declaration.read_only),
        "depth": link.depth if link is not None else 0,  # 0: a fan-out task, no link
        "scope": link.parent_delegation_id if link is not None else "",
        "call_id": link.call_id if link is not None else "",
        "agent": executor.name,
        "task": task,
        "text": text,
        "start": dict(start),
    }


def session_key(job: Mapping[str, Any]) -> str:
    return f"delegation:{job['session_id']}/{job['delegation_id']}"


async def run_job(
    home: Path, job: Mapping[str, Any], beat: Callable[[str], None]
) -> dict[str, Any]:
    from yagent.app.assemble import open_app  # the app's whole graph: only on a worker

    workspace = Path(str(job["workspace"]))
    config = load(home=home, workspace=workspace)
    async with open_app(
        config, home=home, workspace=workspace, yolo=Yolo.YOLO, interactive=False
    ) as app:
        app.observers.append(lambda event: beat(event.type))
        agent = app.agent(str(job["agent"]))
        info, _ = app.store.keyed_session(
            session_key(job),
            workspace=str(workspace),
            title=str(job["task"])[:80],
            model=agent.model or app.engine.model,
            meta={
                "agent": agent.name,
                "parent_session": job["session_id"],
                "delegation_id": job["delegation_id"],
            },
        )
        try:
            return await _run(app, info.id, job)
        finally:
            await app.end_jobs()


async def _run(app: App, sid: str, job: Mapping[str, Any]) -> dict[str, Any]:
    did, agent = str(job["delegation_id"]), str(job["agent"])
    decision = await app.durable.decide(sid, did)
    if decision.run is not None and decision.action is not Action.CONTINUE:
        why = f"concluded in an earlier attempt whose result was lost (its records: session {sid})"
        return lanerun_dict(LaneRun(delegate.Receipt.failed(agent, why), "", None, sid))
    resume = decision if decision.run is not None else None
    text = str(job["text"]) if resume is None else continuation_task(decision)
    declaration = areas.Declaration.of(did, writable=job["write"], read_only=job["read"])
    settings = app.config.agent
    pool = Pool(normalise(settings.max_parallel_delegations))
    monitor = Monitor(idle=settings.delegate_idle_timeout, total=settings.delegate_total_timeout)
    async with pool.slot() as slot:
        depth = int(job["depth"])
        link = (
            Link(pool, depth, monitor, slot, str(job["scope"]), str(job["call_id"]))
            if depth
            else None
        )
        gate = app.safety.commands.confined(list(job["write"]))
        lane = Lane(str(job["name"]), did, declaration, gate, link)
        with app.sessions.held(sid) as session:  # the delegator's session, held while it runs
            ran = await run_lane(
                app,
                session,
                lane,
                executor=delegate.Executor.of(agent, ()),
                required=frozenset(),
                task=str(job["task"]),
                text=text,
                resume=resume,
                start=job["start"],
            )
    return lanerun_dict(LaneRun(ran.receipt, ran.run_status, ran.result, sid))


def lanerun_dict(ran: LaneRun) -> dict[str, Any]:
    r, result = ran.receipt, ran.result
    out: dict[str, Any] = {
        "receipt": {"status": r.status.value, "executor": r.executor, "output": r.output}
        | {"reason": r.reason},
        "run_status": ran.run_status,
        "session_id": ran.session_id,
        "result": None,
    }
    if result is not None:
        out["result"] = {
            "status": result.status.value,
            "text": result.text,
            "deliverable": result.deliverable,
            "steps": result.steps,
            "error": result.error,
            "note": result.note,
        }
    return out


def lanerun_of(data: Mapping[str, Any]) -> LaneRun:
    r = data["receipt"]
    receipt = delegate.Receipt(
        delegate.Status(r["status"]), str(r["executor"]), str(r["output"]), str(r["reason"])
    )
    raw = data.get("result")
    result = None
    if raw is not None:
        result = AgentResult(
            status=Status(raw["status"]),
            text=str(raw["text"]),
            deliverable=raw["deliverable"],
            exit_payload=None,
            steps=int(raw["steps"]),
            messages=(),
            usage=Usage(),
            error=str(raw["error"]),
            note=str(raw["note"]),
        )
    return LaneRun(receipt, str(data["run_status"]), result, str(data.get("session_id", "")))
