"""sideeffect PostgreSQL store: at most once across machines sharing one database.

Contract (on top of `RowStore`'s, through `kernel.durable.pgdb`):
- Every operation is one transaction; a write first takes the store's advisory lock, so two
  workers on any machines never both judge the same key or resource free, and fences grow by one
  per grant under that lock — minted by the database, not by a worker.
- Expiry is judged by the SERVER's clock read inside the transaction (unless a clock is injected
  with `set_clock`, as the contract suite does): a worker paused past its lease (SIGSTOP, a VM
  freeze) finds, when it wakes, that its lease is over by the one clock every worker shares, and
  its `complete` is refused; a newer grant's fence refuses it whatever the clocks say.
- The schema is versioned in `schema_version` (component `sideeffect`); a newer version is
  refused. A row whose state this code does not know is a `StoreError`, never misread.
Leaves to the host: the URL and the pool (`pgdb.Pool`), shared with other stores or owned.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from yagent.kernel.durable import pgdb
from yagent.kernel.durable.sideeffect.errors import StoreError
from yagent.kernel.durable.sideeffect.sqlite import _SqliteTx
from yagent.kernel.durable.sideeffect.store import RowStore, Tx
from yagent.kernel.durable.sideeffect.types import Clock

T = TypeVar("T")

MIGRATIONS = (
    (
        """CREATE TABLE sideeffect_keys (
            key TEXT PRIMARY KEY,
            state TEXT NOT NULL,
            resource TEXT NOT NULL,
            fence BIGINT NOT NULL,
            holder TEXT NOT NULL,
            expires_at DOUBLE PRECISION NOT NULL,
            retry_safety TEXT NOT NULL,
            released INTEGER NOT NULL,
            result BYTEA,
            reason TEXT NOT NULL
        )""",
        "CREATE INDEX sideeffect_keys_state ON sideeffect_keys (state, key)",
        """CREATE TABLE sideeffect_gates (
            resource TEXT PRIMARY KEY,
            fence BIGINT NOT NULL,
            key TEXT,
            holder TEXT,
            expires_at DOUBLE PRECISION NOT NULL
        )""",
    ),
)


class PgStore(RowStore, pgdb.DatabaseStore):
    """A `ClockedStore` in PostgreSQL (see the module docstring)."""

    def __init__(self, where: str | pgdb.Pool, *, clock: Clock | None = None) -> None:
        super().__init__(clock)
        self._server_time = clock is None
        self._open_db(where, prefix="sideeffect", migrations=MIGRATIONS, error=StoreError)

    def set_clock(self, clock: Clock) -> None:
        super().set_clock(clock)
        self._server_time = False

    async def _transact(self, fn: Callable[[Tx, float], T], *, write: bool) -> T:
        def body(conn: pgdb.Connection) -> T:
            now = conn.now if self._server_time else self._clock.now()
            return fn(_SqliteTx(conn), now)  # type: ignore[arg-type]

        return await self._db.transact(body, write=write)
