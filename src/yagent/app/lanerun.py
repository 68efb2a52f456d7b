"""One confined sub-agent run in a session: the part a parallel task (`app.fanrun`) and a
delegation (`app.delegation`) share.

Contract:
- `run_lane(services, session, lane, ...)` publishes `delegation_start` in the session (its
  `app.opensession.OpenSession`), runs the task as its own agent run there (`services.run`, which
  is `App.run`, with the lane: its delegation id on everything it records,
  its worktree ring and confined commands), and turns the end into a
  `kernel.judge.delegate` receipt:
  completed when the run finished or answered (output = its deliverable, else its last text,
  neutralised by `untrusted.deliverable`: it was written from untrusted tool output), failed on
  any other end or an exception (which never reaches the caller's other work), refused when no
  executor qualifies. Cancellation propagates.
- When the run died before its loop could close its span, a `run_end` is published for it.
- `LaneRun.result` is the agent's own result when its loop ended (None when it raised): callers
  read how it ended (paused, timed out, submitted or not) from it, never from the receipt's text.
  `LaneRun.session_id` is where the run's records are when not in the caller's session.
- The engine seam: when the context carries a remote lane runner (`remote`, set by a host that
  runs lanes elsewhere — `scale.temporal.remote`), `run_lane` hands the lane to it with the same
  arguments and returns its `LaneRun`; nothing here knows which engine it is.
Leaves to the caller: the `delegation_receipt` event and whatever it keeps of the receipt.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from yagent.agents import untrusted
from yagent.agents.results import AgentResult
from yagent.app.durable import ResumeDecision
from yagent.app.lane import Lane
from yagent.app.opensession import OpenSession
from yagent.app.services import LaneServices
from yagent.app.stopkind import stop_kind
from yagent.kernel.judge import delegate
from yagent.tools.areastage import describe


class Unfinished(Exception):  # the receipt reads "Unfinished: <how the run ended>"
    """A sub-run that ended without completing its task."""


@dataclass(frozen=True, slots=True)
class LaneRun:
    receipt: delegate.Receipt
    run_status: str  # how the agent run ended; "" when it never ended on its own
    result: AgentResult | None
    session_id: str = ""  # the session holding the run's records, when not the caller's


LaneRunner = Callable[..., Awaitable[LaneRun]]  # `run_lane`'s own signature
remote: ContextVar[LaneRunner | None] = ContextVar("yagent_remote_lanes", default=None)


async def run_lane(
    services: LaneServices,
    session: OpenSession,
    lane: Lane,
    *,
    executor: delegate.Executor,
    required: frozenset[str],
    task: str,
    text: str,
    resume: ResumeDecision | None,
    start: Mapping[str, Any],
) -> LaneRun:
    """Run `text` (the task, or its continuation when `resume`) as `lane` (module contract);
    `start`: the fields `delegation_start` carries beside the common ones."""
    elsewhere = remote.get()
    if elsewhere is not None:
        return await elsewhere(
            services,
            session,
            lane,
            executor=executor,
            required=required,
            task=task,
            text=text,
            resume=resume,
            start=start,
        )
    publish = session.publish
    base = {"agent": executor.name, "delegation_id": lane.delegation_id}
    publish(
        "delegation_start",
        {
            **base,
            **start,
            "task": task,
            "name": lane.name,
            "areas": describe(lane.declaration),
            "resumed": resume is not None,
        },
    )
    ended: list[AgentResult] = []

    async def work(chosen: delegate.Executor) -> str:
        try:
            _, result = await services.run(
                text, agent_name=chosen.name, session_id=session.id, lane=lane, resume=resume
            )
        except ExceptionGroup as group:  # the run's task groups wrap what went wrong
            raise Unfinished(f"the run raised {leaves(group)}") from group
        ended.append(result)
        if not stop_kind(result.status).delivered:
            why = result.error or result.note or "nothing was delivered"
            raise Unfinished(f"the run ended {result.status.value}: {why}")
        return untrusted.deliverable(result.deliverable or result.text)

    receipt = await delegate.delegate(required, [executor], work)
    if not ended:  # the run died before its loop could close its span
        publish("run_end", {**base, "status": "error", "steps": 0, "error": receipt.reason})
    result = ended[0] if ended else None
    return LaneRun(receipt, result.status.value if result else "", result)


def leaves(group: BaseExceptionGroup[Any]) -> str:
    found: list[str] = []
    for exc in group.exceptions:
        if isinstance(exc, BaseExceptionGroup):
            found.append(leaves(exc))
        else:
            found.append(f"{type(exc).__name__}: {exc}")
    return "; ".join(found)
