"""taskboard SQLite board: the embedded default, claims atomic across processes on one machine.

Contract: every operation is one SQLite transaction (`BEGIN IMMEDIATE` for writes, so two
processes can never both judge a task unclaimed), the clock is read after the lock is held, and a
refusal rolls back. Tasks live in `taskboard_tasks` (posting order kept, claim tokens unique by
index) in a file other stores may share; `yagent.kernel.durable.sqlitedb` gives WAL, busy timeout,
durability and schema versioning. A row this code cannot read is a `StoreError`, never misread.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from yagent.kernel.durable.sqlitedb import Database, DatabaseStore
from yagent.kernel.durable.taskboard.store import RowBoard, Tx
from yagent.kernel.durable.taskboard.types import (
    Clock,
    InvalidArgumentError,
    Lease,
    Status,
    StoreError,
    Task,
)

T = TypeVar("T")

SCHEMA_VERSION = 1
_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS taskboard_tasks (
        pos INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        status TEXT NOT NULL,
        depends_on TEXT NOT NULL,
        payload TEXT NOT NULL,
        owner TEXT NOT NULL,
        token TEXT,
        lease_owner TEXT,
        expires_at REAL,
        result TEXT NOT NULL,
        attempts INTEGER NOT NULL
    )""",
    "CREATE UNIQUE INDEX IF NOT EXISTS taskboard_tasks_token ON taskboard_tasks (token)"
    " WHERE token IS NOT NULL",
)
_COLUMNS = (
    "id, status, depends_on, payload, owner, token, lease_owner, expires_at, result, attempts"
)
_SELECT = f"SELECT {_COLUMNS} FROM taskboard_tasks"


def _task(row: Any) -> Task:
    task_id, status, deps, payload, owner, token, lease_owner, expires_at, result, attempts = row
    try:
        lease = None
        if token is not None or lease_owner is not None or expires_at is not None:
            lease = Lease(token, lease_owner, float(expires_at))
        depends_on = json.loads(deps)
        if not isinstance(depends_on, list):
            raise InvalidArgumentError("depends_on is not a list")
        return Task(
            task_id, Status(status), tuple(depends_on), payload, owner, lease, result, attempts
        )
    except (ValueError, TypeError) as exc:
        raise StoreError(f"taskboard: unreadable row for task {task_id!r}: {exc}") from exc


class _SqliteTx:
    __slots__ = ("_conn",)

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def task(self, task_id: str) -> Task | None:
        row = self._conn.execute(f"{_SELECT} WHERE id = ?", (task_id,)).fetchone()
        return None if row is None else _task(row)

    def by_token(self, token: str) -> Task | None:
        row = self._conn.execute(f"{_SELECT} WHERE token = ?", (token,)).fetchone()
        return None if row is None else _task(row)

    def tasks(self) -> Sequence[Task]:
        return [_task(row) for row in self._conn.execute(f"{_SELECT} ORDER BY pos")]

    def put(self, task: Task) -> None:
        lease = task.lease
        self._conn.execute(
            # An upsert keeps the posting position; a token colliding with another task's fails
            # the transaction instead of silently replacing that task.
            f"INSERT INTO taskboard_tasks ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT (id) DO UPDATE SET status = excluded.status,"
            " depends_on = excluded.depends_on, payload = excluded.payload,"
            " owner = excluded.owner, token = excluded.token, lease_owner = excluded.lease_owner,"
            " expires_at = excluded.expires_at, result = excluded.result,"
            " attempts = excluded.attempts",
            (
                task.id,
                task.status.value,
                json.dumps(list(task.depends_on)),
                task.payload,
                task.owner,
                None if lease is None else lease.token,
                None if lease is None else lease.owner,
                None if lease is None else lease.expires_at,
                task.result,
                task.attempts,
            ),
        )

    def clear(self) -> None:
        self._conn.execute("DELETE FROM taskboard_tasks")


class SqliteBoard(RowBoard, DatabaseStore):
    """A `ClockedBoard` in one SQLite file (see the module docstring)."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        clock: Clock | None = None,
        busy_timeout: float = 10.0,
        synchronous: str = "FULL",
    ) -> None:
        super().__init__(clock)
        self._db = Database(
            path,
            prefix="taskboard",
            version=SCHEMA_VERSION,
            schema=_SCHEMA,
            error=StoreError,
            invalid=InvalidArgumentError,
            busy_timeout=busy_timeout,
            synchronous=synchronous,
        )

    async def _transact(self, fn: Callable[[Tx, float], T], *, write: bool) -> T:
        return await self._db.transact(
            lambda conn: fn(_SqliteTx(conn), self._clock.now()), write=write
        )
