"""checkpoint PostgreSQL store: snapshots any worker on any machine can resume from.

Contract: the `StoreCAS` / `StepsCAS` contract of `checkpoint.store`, judged by the same
`require_newer`, through `kernel.durable.pgdb`: each operation is one transaction, a write takes the
store's advisory lock first (two workers never both win a seq), a load reads one snapshot. Steps
saved by their changes are rows beside the snapshot's own list, kept in the order first saved (a
database sequence). The schema is versioned in `schema_version` (component `checkpoint`); an
unreadable row is a `StoreError`, never misread.
"""

from __future__ import annotations

from collections.abc import Sequence

from yagent.kernel.durable import pgdb
from yagent.kernel.durable.checkpoint.errors import StoreError
from yagent.kernel.durable.checkpoint.store import (
    _changes,
    _decode,
    _run_id,
    _snapshot,
    write_changes,
    write_snapshot,
)
from yagent.kernel.durable.checkpoint.types import RunProgress, RunState, StepRecord, encode

MIGRATIONS = (
    (
        """CREATE TABLE checkpoint_snapshots (
            run_id TEXT PRIMARY KEY,
            seq BIGINT NOT NULL,
            state TEXT NOT NULL,
            steps TEXT NOT NULL
        )""",
        """CREATE TABLE checkpoint_steps (
            pos BIGSERIAL,
            run_id TEXT NOT NULL,
            step_id TEXT NOT NULL,
            status TEXT NOT NULL,
            digest TEXT NOT NULL,
            detail TEXT NOT NULL,
            PRIMARY KEY (run_id, step_id)
        )""",
    ),
)


class PgStore(pgdb.DatabaseStore):
    """Snapshots in PostgreSQL (see the module docstring)."""

    def __init__(self, where: str | pgdb.Pool) -> None:
        self._open_db(where, prefix="checkpoint", migrations=MIGRATIONS, error=StoreError)

    async def load(self, run_id: str) -> RunProgress | None:
        key = _run_id(run_id)

        def op(conn: pgdb.Connection) -> RunProgress | None:
            row = conn.execute(
                "SELECT seq, state, steps FROM checkpoint_snapshots WHERE run_id = ?", (key,)
            ).fetchone()
            if row is None:
                return None
            rows = conn.execute(
                "SELECT step_id, status, digest, detail FROM checkpoint_steps WHERE run_id = ?"
                " ORDER BY pos",
                (key,),
            ).fetchall()
            return _decode(key, tuple(row), [tuple(r) for r in rows])

        return await self._db.transact(op, write=False)

    async def save_steps_if_newer(
        self, run_id: str, seq: int, state: RunState, steps: Sequence[StepRecord]
    ) -> None:
        change = _changes(run_id, seq, state, steps)

        def op(conn: pgdb.Connection) -> None:
            write_changes(conn, change)

        await self._db.transact(op, write=True)

    async def save_if_newer(self, snapshot: RunProgress) -> None:
        snap = _snapshot(snapshot)
        body = encode(snap)

        def op(conn: pgdb.Connection) -> None:
            write_snapshot(conn, snap, body)

        await self._db.transact(op, write=True)
