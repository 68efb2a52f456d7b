"""`PgSessionStore`: the session store in PostgreSQL, so any machine can resume any session.

Contract: the same methods and guarantees as `SessionStore` (it IS one: the sessions, log and
ledger parts run unchanged), with the connection underneath replaced by `kernel.durable.pgdb`:
- every write is one transaction under the store's advisory lock (the per-session sequence read
  and the insert that uses it never interleave with another writer, on any machine; the last
  seq is read once per table and transaction, never remembered across them); every read
  is one REPEATABLE READ snapshot (an export sees one state); `batch()` is one transaction whose
  calls are savepoints, as in SQLite;
- timestamps are the SERVER's clock (unless a clock is injected), so sessions written from several
  machines order by one clock;
- the schema is the SQLite store's own migration list (`memory.schema.MIGRATIONS`), read in
  PostgreSQL's types (REAL → DOUBLE PRECISION; no `WITHOUT ROWID`), versioned in
  `schema_version` under component `sessions`; a newer version is a `SchemaError`, nothing changed;
- a record the log stores deflated (`codec.pack`, bytes) is kept in its TEXT column marked and
  base64-encoded, and read back as the same bytes: JSON text never starts with the marker.
An unreachable database is a `SessionStoreError` naming where it points, never the password.
"""

from __future__ import annotations

import base64
import contextlib
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
from psycopg.adapt import Dumper, Loader

from yagent.kernel.durable import pgdb
from yagent.kernel.durable.clock import SystemClock
from yagent.memory.errors import SchemaError, SessionStoreError
from yagent.memory.records import Clock
from yagent.memory.schema import MIGRATIONS
from yagent.memory.store import SessionStore

_MARK = b"\x01zlib:"
_TEXT_OID = psycopg.adapters.types["text"].oid

PG_MIGRATIONS = tuple(
    tuple(s.replace(" WITHOUT ROWID", "").replace(" REAL", " DOUBLE PRECISION") for s in stmts)
    for _, stmts in MIGRATIONS
)


class _PackedDumper(Dumper):
    oid = _TEXT_OID

    def dump(self, obj: Any) -> bytes:
        return _MARK + base64.b64encode(bytes(obj))


class _TextLoader(Loader):
    def load(self, data: Any) -> str | bytes:
        raw = bytes(data)
        return base64.b64decode(raw[len(_MARK) :]) if raw.startswith(_MARK) else raw.decode()


def _adapt(adapters: psycopg.adapt.AdaptersMap) -> None:
    adapters.register_dumper(bytes, _PackedDumper)
    adapters.register_loader("text", _TextLoader)


class PgSessionStore(SessionStore):
    """A `SessionStore` in PostgreSQL (see the module contract)."""

    KEEPS_BETWEEN_TRANSACTIONS = False  # no `data_version`: each transaction reads again

    def __init__(self, where: str | pgdb.Pool, *, clock: Clock | None = None) -> None:
        # StoreBase.__init__ opens an SQLite file: this store sets the same fields itself.
        self._server_time = clock is None
        self._clock = clock if clock is not None else SystemClock()
        self._lock = threading.RLock()
        self._pid = os.getpid()
        self._conn = None
        self._batch = None
        self._init_batch_state()
        self._journal_mode = "postgresql"
        self._own_pool: pgdb.Pool | None = None
        try:
            pool = where if isinstance(where, pgdb.Pool) else pgdb.Pool(where)
        except pgdb.PgError as exc:
            raise SessionStoreError(f"session store: {exc}") from None
        self._own_pool = None if pool is where else pool
        self._path = Path(pool.where)
        try:
            self._db: pgdb.Database | None = pgdb.Database(
                pool,
                prefix="sessions",
                migrations=PG_MIGRATIONS,
                error=SessionStoreError,
                adapt=_adapt,
            )
        except pgdb.NewerSchemaError as exc:
            self.close()
            raise SchemaError(f"session store: {exc}") from None
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        with self._lock:
            db, self._db = getattr(self, "_db", None), None
            pool, self._own_pool = self._own_pool, None
        if db is not None:
            db.close()
        if pool is not None:
            pool.close()

    @contextlib.contextmanager
    def _transaction(self, *, write: bool) -> Iterator[tuple[Any, float]]:
        with self._lock:
            if self._batch is not None and self._whole:  # inside `batch(whole=True)`
                try:
                    yield self._batch, self._now(self._batch)  # type: ignore[arg-type]  # a pg connection here
                except BaseException as exc:
                    self._failed = self._failed or exc  # the batch cannot commit now
                    raise
                return
            if self._batch is not None:  # inside `batch()`: a savepoint of its transaction
                with self._savepoint(self._batch) as joined:
                    yield joined
                return
            db = self._db
            if db is None:
                raise SessionStoreError(f"session store {str(self._path)!r} is closed")
            self._seqs_checked = False
            try:
                with db.transaction(write=write) as conn:
                    yield conn, self._now(conn)
            except BaseException:
                self._forget()  # nothing this transaction took or wrote is stored
                raise
            self._assigned.clear()

    def _seqs_current(self, conn: Any) -> bool:
        """Never: PostgreSQL has no `data_version`, so each transaction reads a table's last seq
        again (once, under the store's advisory lock) instead of trusting the last one's."""
        return False

    @contextlib.contextmanager
    def _savepoint(self, conn: Any) -> Iterator[tuple[Any, float]]:
        conn.execute("SAVEPOINT store_call")
        try:
            yield conn, self._now(conn)
        except BaseException:
            self._forget()  # what the undone call touched or wrote is no longer so
            with contextlib.suppress(psycopg.Error):
                conn.execute("ROLLBACK TO SAVEPOINT store_call")
                conn.execute("RELEASE SAVEPOINT store_call")
            raise
        conn.execute("RELEASE SAVEPOINT store_call")

    def _now(self, conn: pgdb.Connection) -> float:
        return conn.now if self._server_time else self._clock.now()
