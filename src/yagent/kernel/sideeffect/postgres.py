"""sideeffect PostgreSQL store: at most once across machines sharing one database.

Contract (on top of `RowStore`'s, through `kernel.pgdb`):
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

from yagent.kernel import pgdb
from yagent.kernel.sideeffect import rules
from yagent.kernel.sideeffect.errors import StoreError
from yagent.kernel.sideeffect.sqlite import _KEY_COLUMNS, _SqliteTx
from yagent.kernel.sideeffect.store import RowStore, Tx
from yagent.kernel.sideeffect.types import Clock

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
_UPDATE_KEY = ", ".join(f"{c} = excluded.{c}" for c in _KEY_COLUMNS.split(", ")[1:])


class _PgTx(_SqliteTx):
    """The SQLite transaction's reads (portable SQL), with upserts PostgreSQL speaks."""

    __slots__ = ()

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
            return fn(_PgTx(conn), now)  # type: ignore[arg-type]

        return await self._db.transact(body, write=write)
