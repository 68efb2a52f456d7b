"""sideeffect SQLite store: the embedded default, safe across processes on one machine.

Contract:
- Every operation is one SQLite transaction: writes begin with `BEGIN IMMEDIATE` (the database
  write lock is taken before anything is read, so two processes can never both judge the same
  rows as free), reads with a deferred `BEGIN`. The clock is read after the lock is held. A
  refused judgement rolls back; nothing is half-written.
- The database runs in WAL mode with a busy timeout: a process that finds the lock taken waits up
  to `busy_timeout` seconds, then gets a `StoreError` (nothing changed) — never a wrong answer.
- `synchronous` is FULL by default: a committed intent survives power loss, not just a killed
  process. NORMAL is accepted (survives process crashes, may lose the last commits on power
  loss); OFF is refused, because an intent that can vanish leaves no trace to reconcile.
- The schema is created idempotently (`CREATE … IF NOT EXISTS` in one transaction), in tables
  prefixed `sideeffect_`, so the file may be shared with other stores. A schema version this code
  does not know is refused rather than misread; so is a row whose state it does not know.
- One connection per store object, used from worker threads (`anyio.to_thread`) behind a lock;
  do not share a store object across `fork()`: open one per process.
- The file handling is `kernel.durable.sqlitedb`'s (the one SQLite wrapper of the kernel): a new
  file is created whole; an empty or damaged file is refused (`sqlitefile.UnusableFileError`) and
  never written over.
Not offered: safety across machines (SQLite locking is only as good as the filesystem's; use a
networked store for that) and protection against wall-clock jumps (leases expire by `time.time`).
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from yagent.kernel.durable.sideeffect import rules
from yagent.kernel.durable.sideeffect.errors import InvalidArgumentError, StoreError
from yagent.kernel.durable.sideeffect.store import RowStore, Tx
from yagent.kernel.durable.sideeffect.types import Clock, RetrySafety, State
from yagent.kernel.durable.sqlitedb import Database, DatabaseStore

T = TypeVar("T")

SCHEMA_VERSION = 1

_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS sideeffect_keys (
        key TEXT PRIMARY KEY,
        state TEXT NOT NULL,
        resource TEXT NOT NULL,
        fence INTEGER NOT NULL,
        holder TEXT NOT NULL,
        expires_at REAL NOT NULL,
        retry_safety TEXT NOT NULL,
        released INTEGER NOT NULL,
        result BLOB,
        reason TEXT NOT NULL
    )""",
    "CREATE INDEX IF NOT EXISTS sideeffect_keys_state ON sideeffect_keys (state, key)",
    """CREATE TABLE IF NOT EXISTS sideeffect_gates (
        resource TEXT PRIMARY KEY,
        fence INTEGER NOT NULL,
        key TEXT,
        holder TEXT,
        expires_at REAL NOT NULL
    )""",
)

_KEY_COLUMNS = (
    "key, state, resource, fence, holder, expires_at, retry_safety, released, result, reason"
)
_UPDATE_KEY = ", ".join(f"{c} = excluded.{c}" for c in _KEY_COLUMNS.split(", ")[1:])


def _key_row(values: Sequence[Any]) -> rules.KeyRow:
    key, state, resource, fence, holder, expires_at, safety, released, result, reason = values
    try:
        return rules.KeyRow(
            key=key,
            state=State(state),
            resource=resource,
            fence=int(fence),
            holder=holder,
            expires_at=float(expires_at),
            retry_safety=RetrySafety(safety),
            released=bool(released),
            result=None if result is None else bytes(result),
            reason=reason,
        )
    except ValueError as exc:
        raise StoreError(f"sideeffect: unreadable row for key {key!r}: {exc}") from exc


class _SqliteTx:
    """One transaction's reads and writes, in the portable SQL `sideeffect.postgres` runs too."""

    __slots__ = ("_conn",)

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def key(self, key: str) -> rules.KeyRow | None:
        row = self._conn.execute(
            f"SELECT {_KEY_COLUMNS} FROM sideeffect_keys WHERE key = ?", (key,)
        ).fetchone()
        return None if row is None else _key_row(row)

    def gate(self, resource: str) -> rules.GateRow | None:
        row = self._conn.execute(
            "SELECT resource, fence, key, holder, expires_at FROM sideeffect_gates"
            " WHERE resource = ?",
            (resource,),
        ).fetchone()
        if row is None:
            return None
        return rules.GateRow(row[0], int(row[1]), row[2], row[3], float(row[4]))

    def put(self, write: rules.Write) -> None:
        if write.key is not None:
            k = write.key
            self._conn.execute(
                f"INSERT INTO sideeffect_keys ({_KEY_COLUMNS})"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
                f" ON CONFLICT (key) DO UPDATE SET {_UPDATE_KEY}",
                (
                    k.key,
                    k.state.value,
                    k.resource,
                    k.fence,
                    k.holder,
                    k.expires_at,
                    k.retry_safety.value,
                    int(k.released),
                    k.result,
                    k.reason,
                ),
            )
        if write.gate is not None:
            g = write.gate
            self._conn.execute(
                "INSERT INTO sideeffect_gates (resource, fence, key, holder, expires_at)"
                " VALUES (?, ?, ?, ?, ?) ON CONFLICT (resource) DO UPDATE SET"
                " fence = excluded.fence, key = excluded.key, holder = excluded.holder,"
                " expires_at = excluded.expires_at",
                (g.resource, g.fence, g.key, g.holder, g.expires_at),
            )

    def open_keys(self) -> Sequence[rules.KeyRow]:
        rows = self._conn.execute(
            # Everything not known to be closed: a row in a state this code does not know is
            # read (and refused) rather than hidden from reconciliation.
            f"SELECT {_KEY_COLUMNS} FROM sideeffect_keys WHERE state NOT IN (?, ?) ORDER BY key",
            (State.COMPLETED.value, State.WITHDRAWN.value),
        ).fetchall()
        return [_key_row(row) for row in rows]


class SqliteStore(RowStore, DatabaseStore):
    """A `ClockedStore` in one SQLite file (see the module docstring for the guarantees)."""

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
            prefix="sideeffect",
            version=SCHEMA_VERSION,
            schema=_SCHEMA,
            error=StoreError,
            invalid=InvalidArgumentError,
            busy_timeout=busy_timeout,
            synchronous=synchronous,
        )

    async def _transact(self, fn: Callable[[Tx, float], T], *, write: bool) -> T:
        # The clock is read inside the transaction, after the write lock is held.
        return await self._db.transact(
            lambda conn: fn(_SqliteTx(conn), self._clock.now()), write=write
        )
