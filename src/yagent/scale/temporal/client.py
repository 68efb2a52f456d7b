"""The client side of `yagent batch --engine temporal`: submit, watch, fetch, cancel.

Contract:
- `submit` starts the batch workflow `batch:<batch id>` (id-reuse policy REJECT_DUPLICATE, the task
  ids in its memo). A batch that was started before — running or ended — is not started again:
  `submit` returns False and the caller watches the existing one. Resubmitting re-runs nothing.
- `states` reads each task workflow's status from the server (no worker needed): not started yet
  → pending; running; completed → the result's status (completed / failed); failed, timed out or
  terminated → failed; cancelled → cancelled. An unknown batch id is `UnknownBatch`.
- `results` returns each final task's result (the task workflow's return value; a task that
  failed as a workflow gets `{"status": "failed", "error": ...}`), in the batch's order.
- `cancel` cancels the batch workflow (its tasks are cancelled with it) and each task still open.
Leaves to the CLI: display, exit codes.
"""

from __future__ import annotations

import contextlib
from typing import Any

from temporalio.client import Client, WorkflowExecutionStatus, WorkflowHandle
from temporalio.common import WorkflowIDReusePolicy
from temporalio.exceptions import WorkflowAlreadyStartedError
from temporalio.service import RPCError, RPCStatusCode

from yagent.scale import states as st
from yagent.scale.tasks import Batch, task_key
from yagent.scale.temporal.workflows import BatchWorkflow

_OPEN = (WorkflowExecutionStatus.RUNNING, WorkflowExecutionStatus.CONTINUED_AS_NEW)
_FAILED = (
    WorkflowExecutionStatus.FAILED,
    WorkflowExecutionStatus.TIMED_OUT,
    WorkflowExecutionStatus.TERMINATED,
)


class UnknownBatch(LookupError):
    """No batch with this id on the server."""


def batch_workflow_id(batch_id: str) -> str:
    return f"batch:{batch_id}"


async def submit(client: Client, batch: Batch, queue: str, options: dict[str, Any]) -> bool:
    payload = {
        "batch_id": batch.id,
        "tasks": [t.to_dict() for t in batch.tasks],
        **options,
    }
    try:
        await client.start_workflow(
            BatchWorkflow.run,
            payload,
            id=batch_workflow_id(batch.id),
            task_queue=queue,
            id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
            memo={"tasks": [t.id for t in batch.tasks]},
        )
    except WorkflowAlreadyStartedError:
        return False
    return True


async def task_ids(client: Client, batch_id: str) -> list[str]:
    try:
        described = await client.get_workflow_handle(batch_workflow_id(batch_id)).describe()
    except RPCError as exc:
        if exc.status is RPCStatusCode.NOT_FOUND:
            raise UnknownBatch(f"no batch {batch_id!r} on the Temporal server") from None
        raise
    memo = await described.memo()
    return [str(t) for t in memo.get("tasks", [])]


async def _state(handle: WorkflowHandle[Any, Any], task_id: str) -> tuple[st.TaskState, Any]:
    try:
        described = await handle.describe()
    except RPCError as exc:
        if exc.status is RPCStatusCode.NOT_FOUND:
            return st.TaskState(task_id, st.PENDING), None
        raise
    status = described.status
    if status in _OPEN:
        return st.TaskState(task_id, st.RUNNING), None
    if status == WorkflowExecutionStatus.COMPLETED:
        result = await handle.result()
        state = st.COMPLETED if result.get("status") == st.COMPLETED else st.FAILED
        return st.TaskState(task_id, state, str(result.get("error", ""))), result
    if status == WorkflowExecutionStatus.CANCELED:
        return st.TaskState(task_id, st.CANCELLED), {"status": st.CANCELLED}
    why = f"the task workflow ended {status.name if status else 'unknown'}"
    return st.TaskState(task_id, st.FAILED, why), {"status": st.FAILED, "error": why}


async def states(client: Client, batch_id: str) -> list[st.TaskState]:
    out = []
    for task_id in await task_ids(client, batch_id):
        handle = client.get_workflow_handle(task_key(batch_id, task_id))
        out.append((await _state(handle, task_id))[0])
    return out


async def results(client: Client, batch_id: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for task_id in await task_ids(client, batch_id):
        handle = client.get_workflow_handle(task_key(batch_id, task_id))
        state, result = await _state(handle, task_id)
        if state.state in st.FINAL:
            out.append({"id": task_id, **result})
    return out


async def cancel(client: Client, batch_id: str) -> int:
    """Cancel the batch and its open tasks; how many tasks were still open."""
    ids = await task_ids(client, batch_id)
    with contextlib.suppress(RPCError):  # it has ended: its open tasks are cancelled one by one
        await client.get_workflow_handle(batch_workflow_id(batch_id)).cancel()
    open_tasks = 0
    for task_id in ids:
        handle = client.get_workflow_handle(task_key(batch_id, task_id))
        state, _ = await _state(handle, task_id)
        if state.state in (st.RUNNING, st.PENDING):
            open_tasks += 1
            if state.state == st.RUNNING:
                try:
                    await handle.cancel()
                except RPCError:  # it ended meanwhile
                    open_tasks -= 1
    return open_tasks
