"""commitgate PostgreSQL gate: a (run, step) committed once across machines sharing one database.

Contract (on top of `RowGate`'s, through `kernel.durable.pgdb`): every operation is one transaction;
a write first takes the gate's advisory lock, so two workers on any machines never both judge the
gate free; holdings expire by the SERVER's clock read inside the transaction (unless a clock is
injected with `set_clock`, as the suite does), so a worker paused past its holding cannot commit
when it wakes; tokens carry 128 random bits and a unique index refuses a collision. The schema is
versioned in `schema_version` (component `commitgate`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeVar

from yagent.kernel.durable import pgdb
from yagent.kernel.durable.commitgate.sqlite import _SqliteTx
from yagent.kernel.durable.commitgate.store import Op, RowGate
from yagent.kernel.durable.commitgate.types import Clock, StoreError

T = TypeVar("T")

MIGRATIONS = (
    (
        """CREATE TABLE commitgate_gates (
            run_id TEXT NOT NULL,
            step_id TEXT NOT NULL,
            token TEXT,
            holder TEXT NOT NULL,
            expires_at DOUBLE PRECISION NOT NULL,
            state TEXT,
            committed_by TEXT NOT NULL,
            committed_at DOUBLE PRECISION NOT NULL,
            detail TEXT NOT NULL,
            PRIMARY KEY (run_id, step_id)
        )""",
        "CREATE UNIQUE INDEX commitgate_gates_token ON commitgate_gates (token)"
        " WHERE token IS NOT NULL",
    ),
)


class PgGate(RowGate, pgdb.DatabaseStore):
    """A `ClockedGate` in PostgreSQL (see the module docstring). The SQLite gate's statements are
    the portable subset both databases speak, so its transaction is reused as it is."""

    def __init__(
        self, where: str | pgdb.Pool, terminal: Iterable[str], *, clock: Clock | None = None
    ) -> None:
        super().__init__(terminal, clock)
        self._server_time = clock is None
        self._open_db(where, prefix="commitgate", migrations=MIGRATIONS, error=StoreError)

    def set_clock(self, clock: Clock) -> None:
        super().set_clock(clock)
        self._server_time = False

    async def _transact(self, fn: Op[T], *, write: bool) -> T:
        def body(conn: pgdb.Connection) -> T:
            tx = _SqliteTx(conn)  # type: ignore[arg-type]
            result, new = fn(tx, conn.now if self._server_time else self._clock.now())
            if write and new is not None:
                tx.put(new)
            return result

        return await self._db.transact(body, write=write)
