"""`yagent doctor`'s rows for a fleet: the configured database and the Temporal frontend.

Contract (rows are `(check, ok, detail, required)`, as `cli.doctor` prints them):
- `database_rows(url)`: with `[store] url` empty, one informational row (SQLite in the home).
  Otherwise the database is connected once (`CONNECT_TIMEOUT` seconds, read-only: doctor changes
  nothing) and each component's schema version is read from `schema_version` against the version
  this yagent knows: missing or older → ok (created or migrated at the next start), the same →
  ok, newer → FAIL (this yagent would refuse it). An unreachable database is a FAIL naming where
  it points, never the password.
- `temporal_rows(address)`: with no address (`YAGENT_TEMPORAL_ADDRESS` unset), one
  informational row. Otherwise the frontend is connected within the worker's connect timeout
  and the pollers of `queue` are counted: unreachable → FAIL; no worker polling → ok but said.
psycopg and temporalio are imported only when configured.
"""

from __future__ import annotations

from typing import Any

import anyio

ADDRESS_ENV = "YAGENT_TEMPORAL_ADDRESS"
CONNECT_TIMEOUT = 5
Row = tuple[str, bool, str, bool]


def known_versions() -> dict[str, int]:
    """The schema version of each component this yagent keeps on PostgreSQL."""
    from yagent.app import pgstate
    from yagent.kernel.durable.checkpoint import postgres as checkpoint
    from yagent.kernel.durable.commitgate import postgres as commitgate
    from yagent.kernel.durable.sideeffect import postgres as sideeffect
    from yagent.kernel.durable.taskboard import postgres as taskboard
    from yagent.memory.pgstore import PG_MIGRATIONS

    return {
        "checkpoint": len(checkpoint.MIGRATIONS),
        "commitgate": len(commitgate.MIGRATIONS),
        "lease": len(pgstate.LEASES),
        "runs": len(pgstate.RUNS),
        "sessions": len(PG_MIGRATIONS),
        "sideeffect": len(sideeffect.MIGRATIONS),
        "taskboard": len(taskboard.MIGRATIONS),
    }


def database_rows(url: str) -> list[Row]:
    if not url:
        return [("database", True, "[store] url not set: SQLite files in the yagent home", False)]
    import psycopg

    from yagent.kernel.durable.pgdb import describe

    where = describe(url)
    try:
        with psycopg.connect(url, connect_timeout=CONNECT_TIMEOUT, autocommit=True) as conn:
            conn.read_only = True
            found_table = conn.execute("SELECT to_regclass('schema_version')").fetchone()
            rows = (
                conn.execute("SELECT component, version FROM schema_version").fetchall()
                if found_table is not None and found_table[0] is not None
                else []
            )
    except psycopg.Error as exc:
        why = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return [("database", False, f"{where}: unreachable ({why})", True)]
    have = {str(name): int(version) for name, version in rows}
    out: list[Row] = [("database", True, f"{where}: reachable", True)]
    for component, known in known_versions().items():
        got = have.get(component)
        if got is None:
            out.append((f"schema {component}", True, f"not created yet (version {known})", True))
        elif got > known:
            detail = f"version {got}, newer than this yagent knows ({known}): upgrade yagent"
            out.append((f"schema {component}", False, detail, True))
        elif got < known:
            detail = f"version {got}: migrated to {known} at the next start"
            out.append((f"schema {component}", True, detail, True))
        else:
            out.append((f"schema {component}", True, f"version {got}", True))
    return out


async def _probe(address: str, queue: str) -> tuple[str | None, int]:
    from temporalio.api.enums.v1 import TaskQueueType
    from temporalio.api.taskqueue.v1 import TaskQueue
    from temporalio.api.workflowservice.v1 import DescribeTaskQueueRequest

    from yagent.scale.temporal.worker import Unreachable, connect

    try:
        client = await connect(address)
    except Unreachable as exc:
        return str(exc), 0
    request = DescribeTaskQueueRequest(
        namespace=client.namespace,
        task_queue=TaskQueue(name=queue),
        task_queue_type=TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY,
    )
    answer: Any = await client.workflow_service.describe_task_queue(request)
    return None, len(answer.pollers)


def temporal_rows(address: str, queue: str = "yagent") -> list[Row]:
    if not address:
        detail = f"not configured ({ADDRESS_ENV}): batches run on the local engine"
        return [("temporal", True, detail, False)]
    error, pollers = anyio.run(_probe, address, queue)
    if error is not None:
        return [("temporal", False, error, True)]
    workers = f"{pollers} worker(s) polling {queue!r}" if pollers else f"no worker polls {queue!r}"
    return [("temporal", True, f"{address}: reachable, {workers}", True)]
