"""checkpoint stores: the `StoreCAS` protocol, the in-memory reference and the SQLite store.

Contract of a `StoreCAS` (each operation atomic, also across processes for a shared store):
- `load(run_id)` returns the last saved snapshot of the run, or None.
- `save_if_newer(snapshot)` writes the snapshot only if its seq is above the stored one; a seq of
  0 is refused even when nothing is stored (it is not a real commit, and letting it land would
  give it the one write that can displace an existing snapshot). A refusal is `StaleSeqError`
  and nothing was written. Gaps are allowed: a committer may have lost a seq to a failure.
- A backend failure is a `StoreError` and changed nothing.
Both stores judge with the one function `resume.require_newer`. Snapshot storage medium beyond
these two (PostgreSQL, files) is the host's; it passes the same suite (`checkpoint.suite`).
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from typing import Protocol, runtime_checkable

from yagent.kernel.checkpoint.errors import InvalidArgumentError, StoreError
from yagent.kernel.checkpoint.resume import require_newer
from yagent.kernel.checkpoint.types import Snapshot, decode, encode
from yagent.kernel.sqlitedb import Database, DatabaseStore


@runtime_checkable
class StoreCAS(Protocol):
    """Snapshots by run id, written only forward (see the module docstring)."""

    async def load(self, run_id: str) -> Snapshot | None: ...

    async def save_if_newer(self, snapshot: Snapshot) -> None: ...


def _snapshot(value: object) -> Snapshot:
    if not isinstance(value, Snapshot):
        raise InvalidArgumentError(f"checkpoint: expected a Snapshot, got {type(value).__name__}")
    return value


def _run_id(value: object) -> str:
    if not isinstance(value, str) or not value:
        raise InvalidArgumentError(f"checkpoint: run id must be a non-empty string, got {value!r}")
    return value


class MemoryStore:
    """The in-process reference: one dict behind one lock. Nothing survives the process."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._runs: dict[str, Snapshot] = {}

    async def load(self, run_id: str) -> Snapshot | None:
        key = _run_id(run_id)
        with self._lock:
            return self._runs.get(key)

    async def save_if_newer(self, snapshot: Snapshot) -> None:
        snap = _snapshot(snapshot)
        with self._lock:
            stored = self._runs.get(snap.run_id)
            require_newer(snap.run_id, snap.seq, None if stored is None else stored.seq)
            self._runs[snap.run_id] = snap


SCHEMA_VERSION = 1
_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS checkpoint_snapshots (
        run_id TEXT PRIMARY KEY,
        seq INTEGER NOT NULL,
        state TEXT NOT NULL,
        steps TEXT NOT NULL
    )""",
)


class SqliteStore(DatabaseStore):
    """Snapshots in one SQLite file (WAL, `BEGIN IMMEDIATE`; see `yagent.kernel.sqlitedb`)."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        busy_timeout: float = 10.0,
        synchronous: str = "FULL",
    ) -> None:
        self._db = Database(
            path,
            prefix="checkpoint",
            version=SCHEMA_VERSION,
            schema=_SCHEMA,
            error=StoreError,
            invalid=InvalidArgumentError,
            busy_timeout=busy_timeout,
            synchronous=synchronous,
        )

    async def load(self, run_id: str) -> Snapshot | None:
        key = _run_id(run_id)

        def op(conn: sqlite3.Connection) -> Snapshot | None:
            row = conn.execute(
                "SELECT seq, state, steps FROM checkpoint_snapshots WHERE run_id = ?", (key,)
            ).fetchone()
            return None if row is None else _decode(key, row)

        return await self._db.transact(op, write=False)

    async def save_if_newer(self, snapshot: Snapshot) -> None:
        snap = _snapshot(snapshot)
        body = encode(snap)

        def op(conn: sqlite3.Connection) -> None:
            row = conn.execute(
                "SELECT seq FROM checkpoint_snapshots WHERE run_id = ?", (snap.run_id,)
            ).fetchone()
            require_newer(snap.run_id, snap.seq, None if row is None else int(row[0]))
            conn.execute(
                "INSERT OR REPLACE INTO checkpoint_snapshots (run_id, seq, state, steps)"
                " VALUES (?, ?, ?, ?)",
                (snap.run_id, snap.seq, snap.state.value, body),
            )

        await self._db.transact(op, write=True)


def _decode(run_id: str, row: tuple[object, ...]) -> Snapshot:
    seq, state, steps = row
    try:
        if not isinstance(seq, int) or not isinstance(state, str) or not isinstance(steps, str):
            raise InvalidArgumentError("checkpoint: stored columns have the wrong types")
        return decode(run_id, seq, state, steps)
    except (ValueError, TypeError, json.JSONDecodeError) as exc:
        raise StoreError(f"checkpoint: unreadable snapshot of run {run_id!r}: {exc}") from exc
