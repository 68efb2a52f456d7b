"""Activities: the task steps of `scale.taskrun`, run by a worker for Temporal.

Contract:
- One `Activities` per worker: its yagent home (the stores `open_app` opens) and its work folder
  (the checkouts). Each activity is one step of `scale.taskrun` and returns its
  `kernel.durable.contract.StepOutcome` as a dict (`collect`: the task's result).
- A task's steps may land on different workers (different machines): everything that needs the
  checkout happens in `run`, on the worker that ran the agent — the checkout is made (or kept,
  when an earlier attempt on this worker left it), the run's patch is taken into its outcome,
  the task's branch is committed and pushed when it asks for one (`taskrun.with_push`: the
  worker's git credentials, after the agent run), and the checkout is removed before the outcome
  is returned. `prepare` checks the repository
  and ref (its base commit) and leaves no checkout; `collect` needs no disk. A retry on another
  machine starts from a fresh checkout at the base: the session and checkpoint come from the
  shared store, work files the lost attempt wrote stay on its machine (`fresh_checkout` in the
  result says so; a run that concluded there is reported failed: its patch is not here).
- `delegate` runs one lane of a delegator (a Director's delegation, a fan-out task:
  `scale.lanejob`), heartbeating and reporting failures and cancellation as `run` does.
- `prepare`, `collect` and `cleanup` heartbeat every `BEAT_EVERY` seconds while they work (a
  clone over a slow link, a large patch or tree to remove can outlast a heartbeat timeout; their
  blocking work runs in threads): the workflow gives them the run's heartbeat timeout, so a
  worker that dies in one of them is noticed within it rather than at its 10-minute limit.
- `run` heartbeats to Temporal on every event the agent run publishes and at least every
  `BEAT_EVERY` seconds while the process is alive (a tool call may be silent for minutes; only a
  dead or cut-off worker misses its heartbeat). Cancellation (a cancelled batch) reaches it at its
  next heartbeat and stops the run (`app.run` is cancelled like Ctrl-C's second press); it is
  reported as cancelled (asyncio's, which is what Temporal reads), whatever the run raised.
  A run that raises is retried by Temporal; the next attempt resumes from its checkpoint.
Leaves to `workflows`: order, timeouts, retries.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import anyio
from temporalio import activity

from yagent.kernel.durable.contract import StepOutcome
from yagent.scale import lanejob, taskrun
from yagent.scale.tasks import TaskSpec
from yagent.scale.temporal.workflows import CLEANUP, COLLECT, DELEGATE, PREPARE, RUN

BEAT_EVERY = 2.0
T = TypeVar("T")


@dataclass
class Activities:
    home: Path
    work: Path

    @activity.defn(name=PREPARE)
    async def prepare(self, job: dict[str, Any]) -> dict[str, str]:
        spec = TaskSpec.from_dict(job["task"])
        key = str(job["key"])

        async def check() -> StepOutcome:
            outcome = await taskrun.prepare_step(self.work, key, spec)
            # the run may land on another worker: this check leaves no checkout behind here
            await anyio.to_thread.run_sync(taskrun.cleanup, self.work, key)
            return outcome

        return taskrun.outcome_dict(await _beating(check))

    @activity.defn(name=RUN)
    async def run(self, job: dict[str, Any]) -> dict[str, str]:
        spec = TaskSpec.from_dict(job["task"])

        def beat(kind: str) -> None:
            activity.heartbeat(kind)

        result: list[dict[str, str]] = []
        try:
            async with anyio.create_task_group() as tg:

                async def ticker() -> None:
                    while True:
                        activity.heartbeat("alive")
                        await anyio.sleep(BEAT_EVERY)

                tg.start_soon(ticker)
                key = str(job["key"])
                outcome = await taskrun.run_agent(self.home, self.work, key, spec, beat)
                outcome = await taskrun.with_patch(self.work, key, outcome)
                outcome = await taskrun.with_push(self.work, key, spec, outcome)
                await anyio.to_thread.run_sync(taskrun.cleanup, self.work, key)
                result.append(taskrun.outcome_dict(outcome))
                tg.cancel_scope.cancel()
        except Exception as exc:  # Temporal records the message: make it the leaves' own
            if activity.is_cancelled():  # cancelled (its batch was): say so, not "failed"
                raise asyncio.CancelledError from exc
            activity.logger.exception("the run of %s raised", job["key"])
            raise RuntimeError(taskrun.leaves(exc)) from exc
        return result[0]

    @activity.defn(name=COLLECT)
    async def collect(self, data: dict[str, Any]) -> dict[str, Any]:
        run = taskrun.outcome_of(data["run"])
        key = str(data["job"]["key"])
        return await _beating(lambda: taskrun.collect(self.work, key, str(data["base"]), run))

    @activity.defn(name=CLEANUP)
    async def cleanup(self, job: dict[str, Any]) -> dict[str, str]:
        key = str(job["key"])
        outcome = await _beating(lambda: anyio.to_thread.run_sync(taskrun.cleanup, self.work, key))
        return taskrun.outcome_dict(outcome)

    @activity.defn(name=DELEGATE)
    async def delegate(self, job: dict[str, Any]) -> dict[str, Any]:
        """One lane of a delegator (`scale.lanejob.run_job`), heartbeating as `run` does."""
        result: list[dict[str, Any]] = []
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(_ticker)
                result.append(await lanejob.run_job(self.home, job, activity.heartbeat))
                tg.cancel_scope.cancel()
        except Exception as exc:
            if activity.is_cancelled():
                raise asyncio.CancelledError from exc
            activity.logger.exception("the lane %s raised", job.get("delegation_id"))
            raise RuntimeError(taskrun.leaves(exc)) from exc
        return result[0]

    def all(self) -> list[Any]:
        return [self.prepare, self.run, self.collect, self.cleanup, self.delegate]


async def _ticker() -> None:
    while True:
        activity.heartbeat("alive")
        await anyio.sleep(BEAT_EVERY)


async def _beating(work: Callable[[], Awaitable[T]]) -> T:
    """`work`'s result, heartbeating every `BEAT_EVERY` seconds while it runs (its blocking
    parts — git, file trees — run in threads, so the beats go on)."""
    result: list[T] = []
    async with anyio.create_task_group() as tg:
        tg.start_soon(_ticker)
        result.append(await work())
        tg.cancel_scope.cancel()
    return result[0]
