"""Workflows: a batch (one per batch id) starts one task workflow per task (`<batch>/<task>`).

Contract (Temporal's determinism rules hold: no I/O, no clock, no randomness here — only
temporalio, the standard library and the names of activities):
- `TaskWorkflow` runs the task's activities in order, each with the batch's heartbeat timeout:
  `prepare` (the checkout), `run` (the agent
  run: a long activity that heartbeats, retried on another worker after a missed heartbeat or a
  crash — it resumes from the run's checkpoint), `collect` (the result) and `cleanup`. A failed
  prepare ends the task `failed` without a run; cleanup runs whatever happened. Its result is the
  task's result (`scale.taskrun.collect`) with `steps`: every step's
  `kernel.durable.contract.StepOutcome`.
- `BatchWorkflow` starts every task workflow with the id-reuse policy REJECT_DUPLICATE (a task
  that ran under this batch id never runs again) and the parent-close policy REQUEST_CANCEL
  (cancelling the batch cancels its tasks), waits for all and returns a count per status.
- `DelegationWorkflow` (`yagent.delegation`, one per delegation or fan-out task a host runs on
  Temporal: `scale.temporal.remote`) runs the lane's one activity, `yagent.delegate`, retried
  like a task's run (another worker after a missed heartbeat; it resumes from the checkpoint),
  and returns its result; when every attempt failed, `{"error": why}`.
- Timeouts and attempts come from the batch's input (`heartbeat`, `run_timeout`, `attempts`);
  the run's retries span longer than a session lease (`RUN_ATTEMPTS`).
Leaves to the activities: everything that touches a disk, a network or a model.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

from temporalio import workflow
from temporalio.common import RetryPolicy, WorkflowIDReusePolicy
from temporalio.exceptions import ActivityError, ChildWorkflowError, is_cancelled_exception

PREPARE, RUN, COLLECT, CLEANUP = "yagent.prepare", "yagent.run", "yagent.collect", "yagent.cleanup"
DELEGATE = "yagent.delegate"
_QUICK = timedelta(minutes=10)
# 1+2+4+8 s, then every 10 s: the retries span more than a session lease's 30 s, so a retry
# outlives the lease of a holder that died on another host (`app.lease`).
RUN_ATTEMPTS = 10
_SHORT_RETRY = RetryPolicy(initial_interval=timedelta(seconds=1), maximum_attempts=5)


def _step(key: str, step: str, status: str, detail: str) -> dict[str, str]:
    return {"run_id": key, "step_id": step, "status": status, "digest": "", "detail": detail}


@workflow.defn(name="yagent.task")
class TaskWorkflow:
    @workflow.run
    async def run(self, job: dict[str, Any]) -> dict[str, Any]:
        key, heartbeat = str(job["key"]), float(job.get("heartbeat", 30))
        steps: list[dict[str, str]] = []
        try:
            prepared = await workflow.execute_activity(
                PREPARE,
                job,
                start_to_close_timeout=_QUICK,
                heartbeat_timeout=timedelta(seconds=heartbeat),
                retry_policy=_SHORT_RETRY,
            )
            steps.append(prepared)
            if prepared["status"] != "done":
                return {"key": key, "status": "failed", "error": prepared["detail"], "steps": steps}
            try:
                ran = await workflow.execute_activity(
                    RUN,
                    job,
                    start_to_close_timeout=timedelta(seconds=float(job.get("run_timeout", 7200))),
                    heartbeat_timeout=timedelta(seconds=heartbeat),
                    retry_policy=RetryPolicy(
                        initial_interval=timedelta(seconds=1),
                        maximum_interval=timedelta(seconds=10),
                        maximum_attempts=int(job.get("attempts", RUN_ATTEMPTS)),
                    ),
                )
            except ActivityError as exc:  # every attempt failed: the task failed, say why
                if is_cancelled_exception(exc):
                    raise  # the task was cancelled (its batch was): it ends cancelled
                cause = exc.cause if exc.cause is not None else exc
                steps.append(_step(key, "run", "error", str(cause)))
                return {"key": key, "status": "failed", "error": str(cause), "steps": steps}
            steps.append(ran)
            collected: dict[str, Any] = await workflow.execute_activity(
                COLLECT,
                {"job": job, "base": prepared["digest"], "run": ran},
                start_to_close_timeout=_QUICK,
                heartbeat_timeout=timedelta(seconds=heartbeat),
                retry_policy=_SHORT_RETRY,
            )
            steps.append(_step(key, "collect", "done", ""))
            return collected | {"steps": steps}
        finally:
            await workflow.execute_activity(
                CLEANUP,
                job,
                start_to_close_timeout=_QUICK,
                heartbeat_timeout=timedelta(seconds=heartbeat),
                retry_policy=_SHORT_RETRY,
            )


@workflow.defn(name="yagent.batch")
class BatchWorkflow:
    @workflow.run
    async def run(self, batch: dict[str, Any]) -> dict[str, int]:
        common = {k: v for k, v in batch.items() if k != "tasks"}
        jobs = [
            common | {"key": f"{batch['batch_id']}/{task['id']}", "task": task}
            for task in batch["tasks"]
        ]
        # all at once (in the batch's order): one start at a time would cost a round trip each
        ended = await asyncio.gather(*(self._task(job) for job in jobs))
        counts: dict[str, int] = {}
        for status in ended:
            counts[status] = counts.get(status, 0) + 1
        return counts

    async def _task(self, job: dict[str, Any]) -> str:
        try:
            result = await workflow.execute_child_workflow(
                TaskWorkflow.run,
                job,
                id=job["key"],
                id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
                parent_close_policy=workflow.ParentClosePolicy.REQUEST_CANCEL,
            )
        except ChildWorkflowError:
            return "error"
        return str(result["status"])


@workflow.defn(name="yagent.delegation")
class DelegationWorkflow:
    @workflow.run
    async def run(self, job: dict[str, Any]) -> dict[str, Any]:
        try:
            result: dict[str, Any] = await workflow.execute_activity(
                DELEGATE,
                job,
                start_to_close_timeout=timedelta(seconds=float(job.get("run_timeout", 7200))),
                heartbeat_timeout=timedelta(seconds=float(job.get("heartbeat", 30))),
                retry_policy=RetryPolicy(
                    initial_interval=timedelta(seconds=1),
                    maximum_interval=timedelta(seconds=10),
                    maximum_attempts=int(job.get("attempts", RUN_ATTEMPTS)),
                ),
            )
        except ActivityError as exc:
            if is_cancelled_exception(exc):
                raise
            return {"error": str(exc.cause if exc.cause is not None else exc)}
        return result
