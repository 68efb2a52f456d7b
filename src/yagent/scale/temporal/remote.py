"""The delegator's side of lanes on Temporal: `yagent run --engine temporal` (the Director's
delegations) and `yagent fanout --engine temporal` (its tasks).

Contract:
- `RemoteLanes(address, queue, heartbeat)` is an `app.lanerun.LaneRunner`: installed as
  `app.lanerun.remote` for a run (`install`), every lane that run starts goes to Temporal as the
  workflow `yagent.delegation` (id `delegation:<session>/<delegation id>`, on `queue`), whose one
  activity any worker runs (`scale.lanejob.run_job`: the lane in its own session; a worker lost
  mid-run → another worker resumes it from its checkpoint after `heartbeat` seconds of silence).
  A workflow already started under that id (this delegation was sent before: the delegator was
  resumed) is waited for, not started again.
- It publishes `delegation_start` in the delegator's session (with `engine: temporal` and
  `runs_in`: the lane's own session key) and returns the `LaneRun` the worker returned — the
  delegator reads it exactly as a local one (`format_for_director`, the fan-out receipts).
- While it waits, the delegation's monitor (and so the delegator's) is heartbeated every
  `BEAT_EVERY` seconds: the worker's own watchdog judges the lane's idleness, Temporal a lost
  worker. An unreachable server or every attempt failing is a failed receipt saying why, never an
  exception reaching the delegator's other work.
- The client is connected lazily, once, in the run's own event loop.
Leaves to the CLI: refusing a configuration where workers cannot see the delegator's state.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from contextvars import Token
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio
from temporalio.client import Client
from temporalio.common import WorkflowIDReusePolicy
from temporalio.exceptions import WorkflowAlreadyStartedError

from yagent.app import lanerun
from yagent.app.durable import ResumeDecision
from yagent.app.lane import Lane
from yagent.app.opensession import OpenSession
from yagent.kernel.judge import delegate
from yagent.scale import lanejob
from yagent.scale.temporal.workflows import DelegationWorkflow

if TYPE_CHECKING:
    from yagent.app.assemble import App

BEAT_EVERY = 2.0


@dataclass
class RemoteLanes:
    address: str
    queue: str
    heartbeat: float = 30.0
    _client: Client | None = field(default=None, init=False)
    _lock: anyio.Lock | None = field(default=None, init=False)

    async def _connect(self) -> Client:
        from yagent.scale.temporal.worker import connect

        if self._lock is None:
            self._lock = anyio.Lock()
        async with self._lock:
            if self._client is None:
                self._client = await connect(self.address)
            return self._client

    async def __call__(
        self,
        app: App,
        session: OpenSession,
        lane: Lane,
        *,
        executor: delegate.Executor,
        required: frozenset[str],
        task: str,
        text: str,
        resume: ResumeDecision | None,
        start: Mapping[str, Any],
    ) -> lanerun.LaneRun:
        job = lanejob.job_of(
            app, session.id, lane, executor=executor, task=task, text=text, start=start
        )
        job |= {"heartbeat": self.heartbeat}
        publish = session.publish
        base = {"agent": executor.name, "delegation_id": lane.delegation_id}
        publish(
            "delegation_start",
            {**base, **start, "task": task, "name": lane.name, "resumed": resume is not None}
            | {"engine": "temporal", "runs_in": lanejob.session_key(job)},
        )
        try:
            data = await self._wait(job, lane)
        except Exception as exc:  # the server is gone, the workflow failed: the lane failed
            data = {"error": str(exc).strip().splitlines()[0] if str(exc).strip() else repr(exc)}
        if "error" in data:
            why = f"on Temporal: {data['error']}"
            publish("run_end", {**base, "status": "error", "steps": 0, "error": why})
            return lanerun.LaneRun(delegate.Receipt.failed(executor.name, why), "", None)
        return lanejob.lanerun_of(data)

    async def _wait(self, job: dict[str, Any], lane: Lane) -> dict[str, Any]:
        client = await self._connect()
        wid = f"delegation:{job['session_id']}/{job['delegation_id']}"
        try:
            handle = await client.start_workflow(
                DelegationWorkflow.run,
                job,
                id=wid,
                task_queue=self.queue,
                id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
            )
        except WorkflowAlreadyStartedError:  # sent before (a resumed delegator): wait for it
            handle = client.get_workflow_handle(wid)
        monitor = lane.link.monitor if lane.link is not None else None
        result: dict[str, Any] = {}
        async with anyio.create_task_group() as tg:

            async def beat() -> None:
                while monitor is not None:
                    monitor.heartbeat()
                    await anyio.sleep(BEAT_EVERY)

            tg.start_soon(beat)
            result = await handle.result()
            tg.cancel_scope.cancel()
        return result


def install(lanes: RemoteLanes) -> Token[lanerun.LaneRunner | None]:
    """Run this context's lanes on Temporal (`app.lanerun.remote`); the token undoes it."""
    return lanerun.remote.set(lanes)


def uninstall(token: Token[lanerun.LaneRunner | None]) -> None:
    with contextlib.suppress(ValueError):
        lanerun.remote.reset(token)
