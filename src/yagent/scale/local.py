"""The local engine: a batch's tasks run in this process, at most `max_parallel` at once.

Contract:
- Same steps as on Temporal (`scale.taskrun`), same result shape, kept in the batch's records
  (`scale.records`: `kernel.durable.contract.RunStore` / `StepStore`) under the home.
- Idempotent: a task whose record is final (completed, failed, cancelled) is not run again; a
  task recorded `running` by a process that died resumes from its run's checkpoint (the session
  lease refuses it while another live process runs it: that task is reported failed, "busy").
- A task's failure — a checkout git refused, a run that raised — is that task's `failed` result
  with the reason; it never stops the others. Cancellation (Ctrl-C) stops them all; their records
  stay `running`, so the next submission resumes them.
- `cancel` marks every task not yet final `cancelled` (a resubmission runs none of them); a
  process running the batch finishes the step in flight and records nothing more for it.
Leaves to the CLI: display, exit codes.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio

from yagent.kernel.durable.contract import StepOutcome
from yagent.scale import states as st
from yagent.scale import taskrun
from yagent.scale.records import BatchRecords, RecordExists, StaleRecord
from yagent.scale.tasks import Batch, TaskSpec

PLAN = ("prepare", "run", "collect", "cleanup")
MANIFEST = "manifest.json"


class UnknownBatch(LookupError):
    """No batch with this id in this home."""


def _manifest(home: Path, batch_id: str) -> list[str]:
    path = home / "batches" / batch_id / MANIFEST
    try:
        return [str(t) for t in json.loads(path.read_text())["tasks"]]
    except FileNotFoundError:
        raise UnknownBatch(f"no batch {batch_id!r} in {home}") from None


async def run_batch(
    home: Path,
    work: Path,
    batch: Batch,
    *,
    max_parallel: int,
    on_change: Callable[[st.TaskState], None],
) -> bool:
    """Run what is not final yet; False when the whole batch had been submitted before."""
    records = BatchRecords(home, batch.id)
    records.folder.mkdir(parents=True, exist_ok=True)
    manifest = records.folder / MANIFEST
    new = not manifest.exists()
    if new:
        manifest.write_text(json.dumps({"tasks": [t.id for t in batch.tasks]}))
    limiter = anyio.CapacityLimiter(max_parallel)
    async with anyio.create_task_group() as tg:
        for spec in batch.tasks:
            tg.start_soon(_one, home, work, records, batch.key(spec.id), spec, limiter, on_change)
    return new


async def _one(
    home: Path,
    work: Path,
    records: BatchRecords,
    key: str,
    spec: TaskSpec,
    limiter: anyio.CapacityLimiter,
    on_change: Callable[[st.TaskState], None],
) -> None:
    try:
        record = await records.create(key, PLAN, st.PENDING)
    except RecordExists:
        found = await records.load(key)
        if found is None:  # a record is never removed: only a hand-deleted file gets here
            raise
        record = found
    if record.status in st.FINAL:
        data = records.read(key) or {}
        on_change(
            st.TaskState(spec.id, record.status, str((data.get("result") or {}).get("error", "")))
        )
        return
    on_change(st.TaskState(spec.id, st.PENDING))
    async with limiter:
        try:
            record = await records.set_status(key, st.RUNNING, expected_version=record.version)
        except StaleRecord:
            return  # cancelled (or taken) meanwhile: nothing more to record
        on_change(st.TaskState(spec.id, st.RUNNING))
        result = await _steps(home, work, records, key, spec)
        state = str(result["status"])
        try:
            await records.set_status(key, state, expected_version=record.version)
        except StaleRecord:
            return
        records.keep_result(key, result)
        on_change(st.TaskState(spec.id, state, str(result.get("error", ""))))


async def _steps(
    home: Path, work: Path, records: BatchRecords, key: str, spec: TaskSpec
) -> dict[str, Any]:
    prepared = await taskrun.prepare_step(work, key, spec)
    await records.put(prepared)
    if prepared.status != taskrun.DONE:
        return {"key": key, "status": st.FAILED, "error": prepared.detail}
    try:
        try:
            ran = await taskrun.run_agent(home, work, key, spec, lambda kind: None)
        except Exception as exc:  # the run's failure is this task's, never the batch's
            why = taskrun.leaves(exc)
            await records.put(StepOutcome(key, "run", "error", detail=why))
            return {"key": key, "status": st.FAILED, "error": why}
        ran = await taskrun.with_push(work, key, spec, ran)
        await records.put(ran)
        result = await taskrun.collect(work, key, prepared.digest, ran)
        await records.put(StepOutcome(key, "collect", taskrun.DONE))
        return result
    finally:
        with anyio.CancelScope(shield=True):
            await records.put(await anyio.to_thread.run_sync(taskrun.cleanup, work, key))


def states(home: Path, batch_id: str) -> list[st.TaskState]:
    records = BatchRecords(home, batch_id)
    out = []
    for task_id in _manifest(home, batch_id):
        data = records.read(f"{batch_id}/{task_id}") or {}
        result = data.get("result") or {}
        out.append(
            st.TaskState(task_id, str(data.get("status", st.PENDING)), str(result.get("error", "")))
        )
    return out


def results(home: Path, batch_id: str) -> list[dict[str, Any]]:
    records = BatchRecords(home, batch_id)
    out = []
    for task_id in _manifest(home, batch_id):
        data = records.read(f"{batch_id}/{task_id}") or {}
        if data.get("status") in st.FINAL:
            out.append({"id": task_id, "status": data["status"], **(data.get("result") or {})})
    return out


async def cancel(home: Path, batch_id: str) -> int:
    records = BatchRecords(home, batch_id)
    cancelled = 0
    for task_id in _manifest(home, batch_id):
        key = f"{batch_id}/{task_id}"
        record = await records.load(key)
        if record is None:
            record = await records.create(key, PLAN, st.PENDING)
        if record.status not in st.FINAL:
            try:
                await records.set_status(key, st.CANCELLED, expected_version=record.version)
                cancelled += 1
            except StaleRecord:
                continue
    return cancelled
