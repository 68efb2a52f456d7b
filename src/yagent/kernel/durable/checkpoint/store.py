"""checkpoint stores: the `StoreCAS` protocol, the in-memory reference and the SQLite store.

Contract of a `StoreCAS` (each operation atomic, also across processes for a shared store):
- `load(run_id)` returns the last saved snapshot of the run, or None.
- `save_if_newer(snapshot)` writes the snapshot only if its seq is above the stored one; a seq of
  0 is refused even when nothing is stored (it is not a real commit, and letting it land would
  give it the one write that can displace an existing snapshot). A refusal is `StaleSeqError`
  and nothing was written. Gaps are allowed: a committer may have lost a seq to a failure.
- A backend failure is a `StoreError` and changed nothing.
Both stores judge with the one function `resume.require_newer`. Storage of progress beyond
these two (PostgreSQL, files) is the host's; it passes the same suite
(`kernel.testing.checkpointsuite`).

A `StepsCAS` (both stores here) also saves a snapshot by its changes:
`save_steps_if_newer(run_id, seq, state, steps)` under the same seq rule stores the run's last
snapshot with `seq` and `state`, each given step replacing the stored step of its id and new ids
appended in the given order — what a run that adds a step at a time writes is that step, not
every step again. The SQLite store keeps such steps as rows beside the snapshot's own list.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from collections.abc import Sequence
from dataclasses import replace
from typing import Any, Protocol, runtime_checkable

from yagent.kernel.durable.checkpoint.errors import InvalidArgumentError, StoreError
from yagent.kernel.durable.checkpoint.resume import require_newer
from yagent.kernel.durable.checkpoint.types import (
    RunProgress,
    RunState,
    StepRecord,
    StepStatus,
    decode,
    encode,
)
from yagent.kernel.durable.sqlitedb import Database, DatabaseStore


@runtime_checkable
class StoreCAS(Protocol):
    """Snapshots by run id, written only forward (see the module docstring)."""

    async def load(self, run_id: str) -> RunProgress | None: ...

    async def save_if_newer(self, snapshot: RunProgress) -> None: ...


@runtime_checkable
class StepsCAS(StoreCAS, Protocol):
    """A `StoreCAS` that also saves a snapshot by its changed steps (module docstring)."""

    async def save_steps_if_newer(
        self, run_id: str, seq: int, state: RunState, steps: Sequence[StepRecord]
    ) -> None: ...


def merged(base: Sequence[StepRecord], changed: Sequence[StepRecord]) -> tuple[StepRecord, ...]:
    """`base` with each changed step in place of the one of its id, new ids appended."""
    by_id = {s.id: s for s in base}
    by_id.update((s.id, s) for s in changed)
    return tuple(by_id.values())


def _changes(
    run_id: object, seq: object, state: object, steps: Sequence[StepRecord]
) -> RunProgress:
    """The changes checked as a snapshot of their own (types, unique ids)."""
    if isinstance(seq, bool) or not isinstance(seq, int):
        raise InvalidArgumentError(f"checkpoint: seq must be an int, got {seq!r}")
    return RunProgress(_run_id(run_id), seq, state, tuple(steps))  # type: ignore[arg-type]


def _snapshot(value: object) -> RunProgress:
    if not isinstance(value, RunProgress):
        raise InvalidArgumentError(
            f"checkpoint: expected a RunProgress, got {type(value).__name__}"
        )
    return value


def _run_id(value: object) -> str:
    if not isinstance(value, str) or not value:
        raise InvalidArgumentError(f"checkpoint: run id must be a non-empty string, got {value!r}")
    return value


class MemoryStore:
    """The in-process reference: one dict behind one lock. Nothing survives the process."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._runs: dict[str, RunProgress] = {}

    async def load(self, run_id: str) -> RunProgress | None:
        key = _run_id(run_id)
        with self._lock:
            return self._runs.get(key)

    async def save_if_newer(self, snapshot: RunProgress) -> None:
        snap = _snapshot(snapshot)
        with self._lock:
            stored = self._runs.get(snap.run_id)
            require_newer(snap.run_id, snap.seq, None if stored is None else stored.seq)
            self._runs[snap.run_id] = snap

    async def save_steps_if_newer(
        self, run_id: str, seq: int, state: RunState, steps: Sequence[StepRecord]
    ) -> None:
        change = _changes(run_id, seq, state, steps)
        with self._lock:
            stored = self._runs.get(change.run_id)
            require_newer(change.run_id, change.seq, None if stored is None else stored.seq)
            base = stored.steps if stored is not None else ()
            self._runs[change.run_id] = replace(change, steps=merged(base, change.steps))


SCHEMA_VERSION = 2  # 2: checkpoint_steps, the steps saved by their changes
_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS checkpoint_snapshots (
        run_id TEXT PRIMARY KEY,
        seq INTEGER NOT NULL,
        state TEXT NOT NULL,
        steps TEXT NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS checkpoint_steps (
        run_id TEXT NOT NULL,
        step_id TEXT NOT NULL,
        status TEXT NOT NULL,
        digest TEXT NOT NULL,
        detail TEXT NOT NULL,
        PRIMARY KEY (run_id, step_id)
    )""",
)


class SqliteStore(DatabaseStore):
    """Snapshots in one SQLite file (WAL, `BEGIN IMMEDIATE`; see
    `yagent.kernel.durable.sqlitedb`)."""

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
            older=(1,),
        )

    async def load(self, run_id: str) -> RunProgress | None:
        key = _run_id(run_id)

        def op(conn: sqlite3.Connection) -> RunProgress | None:
            row = conn.execute(
                "SELECT seq, state, steps FROM checkpoint_snapshots WHERE run_id = ?", (key,)
            ).fetchone()
            if row is None:
                return None
            rows = conn.execute(
                "SELECT step_id, status, digest, detail FROM checkpoint_steps WHERE run_id = ?"
                " ORDER BY rowid",
                (key,),
            ).fetchall()
            return _decode(key, row, rows)

        return await self._db.transact(op, write=False)

    async def save_steps_if_newer(
        self, run_id: str, seq: int, state: RunState, steps: Sequence[StepRecord]
    ) -> None:
        change = _changes(run_id, seq, state, steps)

        def op(conn: sqlite3.Connection) -> None:
            write_changes(conn, change)

        await self._db.transact(op, write=True)

    async def save_if_newer(self, snapshot: RunProgress) -> None:
        snap = _snapshot(snapshot)
        body = encode(snap)

        def op(conn: sqlite3.Connection) -> None:
            write_snapshot(conn, snap, body)

        await self._db.transact(op, write=True)


# The writes below are the portable SQL both stores speak (`?` parameters, `ON CONFLICT`
# upserts): the SQLite store here and `checkpoint.postgres` run them inside their own write
# transactions, which hold the store's lock, so the seq read and the write are one step.


def _stored_seq(conn: Any, run_id: str) -> int | None:
    row = conn.execute(
        "SELECT seq FROM checkpoint_snapshots WHERE run_id = ?", (run_id,)
    ).fetchone()
    return None if row is None else int(row[0])


def write_changes(conn: Any, change: RunProgress) -> None:
    """Save `change`'s steps beside its run's snapshot (see `save_steps_if_newer`)."""
    key = change.run_id
    # The common case in one statement: the run is stored and behind this seq (a seq of 0 is
    # never above a stored one). Anything else is judged as a whole save is.
    moved = conn.execute(
        "UPDATE checkpoint_snapshots SET seq = ?, state = ? WHERE run_id = ? AND seq < ?",
        (change.seq, change.state.value, key, change.seq),
    ).rowcount
    if moved != 1:
        require_newer(key, change.seq, _stored_seq(conn, key))
        conn.execute(
            "INSERT INTO checkpoint_snapshots (run_id, seq, state, steps)"
            " VALUES (?, ?, ?, '[]') ON CONFLICT (run_id)"
            " DO UPDATE SET seq = excluded.seq, state = excluded.state",
            (key, change.seq, change.state.value),
        )
    conn.executemany(
        "INSERT INTO checkpoint_steps (run_id, step_id, status, digest, detail)"
        " VALUES (?, ?, ?, ?, ?) ON CONFLICT (run_id, step_id) DO UPDATE SET"
        " status = excluded.status, digest = excluded.digest, detail = excluded.detail",
        [(key, s.id, s.status.value, s.digest, s.detail) for s in change.steps],
    )


def write_snapshot(conn: Any, snap: RunProgress, body: str) -> None:
    """Replace the run's whole snapshot (see `save_if_newer`): its saved step rows go."""
    require_newer(snap.run_id, snap.seq, _stored_seq(conn, snap.run_id))
    conn.execute(
        "INSERT INTO checkpoint_snapshots (run_id, seq, state, steps) VALUES (?, ?, ?, ?)"
        " ON CONFLICT (run_id) DO UPDATE SET seq = excluded.seq,"
        " state = excluded.state, steps = excluded.steps",
        (snap.run_id, snap.seq, snap.state.value, body),
    )
    conn.execute("DELETE FROM checkpoint_steps WHERE run_id = ?", (snap.run_id,))


def _decode(
    run_id: str, row: tuple[object, ...], changed: Sequence[tuple[object, ...]] = ()
) -> RunProgress:
    seq, state, steps = row
    try:
        if not isinstance(seq, int) or not isinstance(state, str) or not isinstance(steps, str):
            raise InvalidArgumentError("checkpoint: stored columns have the wrong types")
        base = decode(run_id, seq, state, steps)
        if not changed:
            return base
        rows = [StepRecord(str(i), StepStatus(str(st)), str(d), str(t)) for i, st, d, t in changed]
        return replace(base, steps=merged(base.steps, rows))
    except (ValueError, TypeError, json.JSONDecodeError) as exc:
        raise StoreError(f"checkpoint: unreadable snapshot of run {run_id!r}: {exc}") from exc
