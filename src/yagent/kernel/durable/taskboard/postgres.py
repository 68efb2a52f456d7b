"""taskboard PostgreSQL board: claims atomic across machines sharing one database.

Contract (on top of `RowBoard`'s, through `kernel.durable.pgdb`): every operation is one
transaction; a write first takes the board's advisory lock (of any number of concurrent claims, on
any machines, exactly one wins); claim expiry is judged by the SERVER's clock read inside the
transaction (unless a clock is injected with `set_clock`, as `boardtest` does); claim tokens carry
128 random bits and a unique index refuses a collision. Posting order is a database sequence. The
schema is versioned in `schema_version` (component `taskboard`); a row this code cannot read is a
`StoreError`, never misread.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from yagent.kernel.durable import pgdb
from yagent.kernel.durable.taskboard.sqlite import _SqliteTx
from yagent.kernel.durable.taskboard.store import RowBoard, Tx
from yagent.kernel.durable.taskboard.types import Clock, StoreError

T = TypeVar("T")

MIGRATIONS = (
    (
        """CREATE TABLE taskboard_tasks (
            pos BIGSERIAL PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            status TEXT NOT NULL,
            depends_on TEXT NOT NULL,
            payload TEXT NOT NULL,
            owner TEXT NOT NULL,
            token TEXT,
            lease_owner TEXT,
            expires_at DOUBLE PRECISION,
            result TEXT NOT NULL,
            attempts INTEGER NOT NULL
        )""",
        "CREATE UNIQUE INDEX taskboard_tasks_token ON taskboard_tasks (token)"
        " WHERE token IS NOT NULL",
    ),
)


class PgBoard(RowBoard, pgdb.DatabaseStore):
    """A `ClockedBoard` in PostgreSQL (see the module docstring). The SQLite board's statements
    are the portable subset both databases speak, so its transaction is reused as it is."""

    def __init__(self, where: str | pgdb.Pool, *, clock: Clock | None = None) -> None:
        super().__init__(clock)
        self._server_time = clock is None
        self._open_db(where, prefix="taskboard", migrations=MIGRATIONS, error=StoreError)

    def set_clock(self, clock: Clock) -> None:
        super().set_clock(clock)
        self._server_time = False

    async def _transact(self, fn: Callable[[Tx, float], T], *, write: bool) -> T:
        def body(conn: pgdb.Connection) -> T:
            now = conn.now if self._server_time else self._clock.now()
            return fn(_SqliteTx(conn), now)  # type: ignore[arg-type]

        return await self._db.transact(body, write=write)
