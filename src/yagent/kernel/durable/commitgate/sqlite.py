"""commitgate SQLite gate: the embedded default, exclusive across processes on one machine.

Contract: every operation is one SQLite transaction (`BEGIN IMMEDIATE` for writes, so two
processes never both judge the gate free), the clock is read after the lock is held, and a
refusal rolls back. Rows live in `commitgate_gates` (one per run and step, tokens unique by
index) in a file that other stores may share; see `yagent.kernel.durable.sqlitedb` for WAL, busy
timeout, durability and schema versioning. A row this code cannot read is a `StoreError`, never
misread.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterable
from typing import Any, TypeVar

from yagent.kernel.durable.commitgate import rules
from yagent.kernel.durable.commitgate.store import Op, RowGate
from yagent.kernel.durable.commitgate.types import Clock, InvalidArgumentError, StoreError
from yagent.kernel.durable.sqlitedb import Database, DatabaseStore

T = TypeVar("T")

SCHEMA_VERSION = 1
_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS commitgate_gates (
        run_id TEXT NOT NULL,
        step_id TEXT NOT NULL,
        token TEXT,
        holder TEXT NOT NULL,
        expires_at REAL NOT NULL,
        state TEXT,
        committed_by TEXT NOT NULL,
        committed_at REAL NOT NULL,
        detail TEXT NOT NULL,
        PRIMARY KEY (run_id, step_id)
    )""",
    "CREATE UNIQUE INDEX IF NOT EXISTS commitgate_gates_token ON commitgate_gates (token)"
    " WHERE token IS NOT NULL",
)
_COLUMNS = "run_id, step_id, token, holder, expires_at, state, committed_by, committed_at, detail"


def _row(values: Any) -> rules.GateRow:
    run_id, step_id, token, holder, expires_at, state, by, at, detail = values
    texts = (run_id, step_id, holder, by, detail)
    if not all(isinstance(v, str) for v in texts) or not all(
        v is None or isinstance(v, str) for v in (token, state)
    ):
        raise StoreError(f"commitgate: unreadable row for {run_id!r}/{step_id!r}")
    return rules.GateRow(
        run_id, step_id, token, holder, float(expires_at), state, by, float(at), detail
    )


class _SqliteTx:
    __slots__ = ("_conn",)

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def row(self, run_id: str, step_id: str) -> rules.GateRow | None:
        found = self._conn.execute(
            f"SELECT {_COLUMNS} FROM commitgate_gates WHERE run_id = ? AND step_id = ?",
            (run_id, step_id),
        ).fetchone()
        return None if found is None else _row(found)

    def by_token(self, token: str) -> rules.GateRow | None:
        found = self._conn.execute(
            f"SELECT {_COLUMNS} FROM commitgate_gates WHERE token = ?", (token,)
        ).fetchone()
        return None if found is None else _row(found)

    def put(self, row: rules.GateRow) -> None:
        self._conn.execute(
            # An upsert, not INSERT OR REPLACE: a token colliding with another row must fail the
            # transaction, never silently delete the row that holds it.
            f"INSERT INTO commitgate_gates ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT (run_id, step_id) DO UPDATE SET token = excluded.token,"
            " holder = excluded.holder, expires_at = excluded.expires_at,"
            " state = excluded.state, committed_by = excluded.committed_by,"
            " committed_at = excluded.committed_at, detail = excluded.detail",
            (
                row.run_id,
                row.step_id,
                row.token,
                row.holder,
                row.expires_at,
                row.state,
                row.committed_by,
                row.committed_at,
                row.detail,
            ),
        )


class SqliteGate(RowGate, DatabaseStore):
    """A `ClockedGate` in one SQLite file (see the module docstring)."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        terminal: Iterable[str],
        *,
        clock: Clock | None = None,
        busy_timeout: float = 10.0,
        synchronous: str = "FULL",
    ) -> None:
        super().__init__(terminal, clock)
        self._db = Database(
            path,
            prefix="commitgate",
            version=SCHEMA_VERSION,
            schema=_SCHEMA,
            error=StoreError,
            invalid=InvalidArgumentError,
            busy_timeout=busy_timeout,
            synchronous=synchronous,
        )

    async def _transact(self, fn: Op[T], *, write: bool) -> T:
        def body(conn: sqlite3.Connection) -> T:
            tx = _SqliteTx(conn)
            result, new = fn(tx, self._clock.now())
            if write and new is not None:
                tx.put(new)
            return result

        return await self._db.transact(body, write=write)
