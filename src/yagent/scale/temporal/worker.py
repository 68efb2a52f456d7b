"""`yagent worker --engine temporal`: a worker process polling one task queue.

Contract:
- `connect(address)` reaches the Temporal frontend within `CONNECT_TIMEOUT` seconds or raises
  `Unreachable` (one line, the CLI's exit 2); it never retries forever.
- `serve(...)` runs the workflows (batch, task, delegation) and their activities on
  `task_queue`, at most `max_parallel` activities at once, until cancelled (SIGINT/SIGTERM: it
  stops polling and lets the activities in flight end — or be cut at the grace period, after
  which Temporal retries them elsewhere). A server that goes away while it runs is waited for:
  the SDK's pollers reconnect. An activity's heartbeats reach the server at least every
  `activities.BEAT_EVERY` seconds while it runs (the SDK would otherwise hold them back for 0.8
  of the heartbeat timeout, leaving a busy worker a fifth of it to spare before it is counted
  dead), so a heartbeat timeout above `BEAT_EVERY` plus the worker's longest stall holds.
Leaves to the host: how many workers, where (docs/scale-out.md).
"""

from __future__ import annotations

import gc
from datetime import timedelta
from pathlib import Path

from temporalio.client import Client
from temporalio.worker import Worker

from yagent.scale.temporal.activities import BEAT_EVERY, Activities
from yagent.scale.temporal.workflows import BatchWorkflow, DelegationWorkflow, TaskWorkflow

CONNECT_TIMEOUT = 5.0
DEFAULT_QUEUE = "yagent"
GRACE = 10.0


class Unreachable(ConnectionError):
    """The Temporal frontend did not answer."""


async def connect(address: str) -> Client:
    try:
        return await Client.connect(address, connect_timeout=timedelta(seconds=CONNECT_TIMEOUT))
    except Exception as exc:  # the SDK raises RuntimeError / RPCError for what went wrong
        why = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    # The failed attempt leaves the SDK's native objects in a reference cycle; collected at
    # interpreter exit they crash it (abort/segfault, seen with temporalio 1.35): collect now.
    gc.collect()
    raise Unreachable(f"cannot reach Temporal at {address}: {why}")


async def serve(
    client: Client, *, home: Path, work: Path, task_queue: str, max_parallel: int
) -> None:
    acts = Activities(home, work)
    worker = Worker(
        client,
        task_queue=task_queue,
        workflows=[BatchWorkflow, TaskWorkflow, DelegationWorkflow],
        activities=acts.all(),
        max_concurrent_activities=max_parallel,
        graceful_shutdown_timeout=timedelta(seconds=GRACE),
        max_heartbeat_throttle_interval=timedelta(seconds=BEAT_EVERY),
    )
    await worker.run()
