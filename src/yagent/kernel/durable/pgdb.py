"""pgdb: one PostgreSQL database that kernel stores on several machines share safely.

Guarantees:
- A `Pool` (psycopg 3, `psycopg_pool.ConnectionPool`) is opened eagerly: a database that cannot
  be reached within `connect_timeout` seconds is a `ConnectError` naming host, port and database
  (never the password), raised before any store is used.
- Every store owns a component name (its table prefix, like `kernel.durable.sqlitedb`) and a list of
  migrations (entry i brings the schema to version i + 1; never edit a shipped one). Opening applies
  the missing ones in ONE transaction under a database-wide advisory lock and records the version in
  `schema_version (component, version)`, so any number of processes may open at once. A database
  holding a version this code does not know is refused (`NewerSchemaError`) with nothing changed.
- Every operation is one transaction on a pooled connection. A write first takes the component's
  transaction-level advisory lock — the PostgreSQL form of SQLite's `BEGIN IMMEDIATE`: two
  writers, on any machines, never both judge the same rows as free. A read is one REPEATABLE READ,
  READ ONLY transaction (one snapshot). The connection's `now` is the SERVER's clock
  (`clock_timestamp()`), read after the lock is held: leases written from different machines
  expire by one clock, whatever the workers' own clocks say.
- When the operation raises, the transaction rolls back; a driver failure becomes the store's
  own error type, and nothing is half-written.
- Statements use `?` placeholders (the portable subset SQLite and PostgreSQL share); `Connection`
  turns them into psycopg's. A statement must not contain a literal `?` or `%`.
Leaves to the host: the URL, pool sizes, the statements. Operations run psycopg's blocking
connections on worker threads (`anyio.to_thread`): the shared store bodies judge inside a
synchronous function (docs/adr/0021-pg-stores-on-worker-threads.md).
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Self, TypeVar

import anyio.to_thread
import psycopg
import psycopg_pool
from psycopg import conninfo

T = TypeVar("T")

# The pool retries in the background and logs each failed attempt; the caller is told instead
# (the store's error), so those attempts never reach the terminal as stray warnings.
logging.getLogger("psycopg.pool").addHandler(logging.NullHandler())
logging.getLogger("psycopg.pool").propagate = False

MIGRATION_LOCK = 0x79616774  # "yagt": the advisory lock key space of every yagent store
_VERSION_TABLE = (
    "CREATE TABLE IF NOT EXISTS schema_version"
    " (component TEXT PRIMARY KEY, version INTEGER NOT NULL)"
)


class PgError(Exception):
    """The database could not be used; nothing is known to have changed."""


class ConnectError(PgError):
    """The database could not be reached (or refused the connection)."""


class NewerSchemaError(PgError):
    """The database holds a schema version newer than this code knows; nothing was changed."""


def is_url(value: str) -> bool:
    """True for a PostgreSQL connection URL (`postgresql://…` or `postgres://…`)."""
    return value.startswith(("postgresql://", "postgres://"))


def describe(url: str) -> str:
    """Where `url` points, without credentials: `postgresql://host:port/dbname`."""
    try:
        parts = conninfo.conninfo_to_dict(url)
    except psycopg.ProgrammingError:
        return "postgresql://<unreadable url>"
    host = str(parts.get("host") or "localhost")
    port = str(parts.get("port") or "5432")
    return f"postgresql://{host}:{port}/{parts.get('dbname') or ''}"


Adapt = Callable[[psycopg.adapt.AdaptersMap], None]


class Connection:
    """One connection inside one transaction: `execute` with `?` placeholders, and `now`.
    A store's `adapt` (its own type dumpers and loaders) applies to its cursors only: the
    pooled connection itself is shared with other stores."""

    __slots__ = ("_adapt", "_conn", "now")

    def __init__(
        self, conn: psycopg.Connection[Any], now: float, adapt: Adapt | None = None
    ) -> None:
        self._conn = conn
        self._adapt = adapt
        self.now = now  # the server's clock, read once the transaction held its lock

    def execute(self, sql: str, params: Sequence[Any] = ()) -> psycopg.Cursor[Any]:
        if self._adapt is None:
            return self._conn.execute(sql.replace("?", "%s"), tuple(params))
        cursor = self._conn.cursor()
        self._adapt(cursor.adapters)
        return cursor.execute(sql.replace("?", "%s"), tuple(params))

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        with self._conn.cursor() as cursor:
            cursor.executemany(sql.replace("?", "%s"), [tuple(r) for r in rows])


class Pool:
    """A pool of connections to one database, shared by the stores opened on it."""

    def __init__(
        self, url: str, *, min_size: int = 1, max_size: int = 8, connect_timeout: float = 5.0
    ) -> None:
        self.where = describe(url)
        try:  # one direct attempt first: an unreachable database is said at once, with why
            psycopg.connect(url, connect_timeout=max(1, int(connect_timeout))).close()
        except psycopg.Error as exc:
            why = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise ConnectError(f"cannot reach the database at {self.where}: {why}") from None
        self._pool: psycopg_pool.ConnectionPool[psycopg.Connection[Any]] = (
            psycopg_pool.ConnectionPool(
                url,
                min_size=min_size,
                max_size=max_size,
                open=False,
                timeout=connect_timeout,
                kwargs={"autocommit": True, "connect_timeout": max(1, int(connect_timeout))},
                name="yagent",
            )
        )
        try:
            self._pool.open(wait=True, timeout=connect_timeout)
        except (psycopg_pool.PoolTimeout, psycopg.Error) as exc:
            self._pool.close()
            raise ConnectError(
                f"cannot reach the database at {self.where} within {connect_timeout:g}s"
            ) from exc

    def close(self) -> None:
        self._pool.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextlib.contextmanager
    def connection(self) -> Any:
        try:
            with self._pool.connection() as conn:
                yield conn
        except psycopg_pool.PoolTimeout as exc:
            raise ConnectError(f"no connection to the database at {self.where}: {exc}") from exc
        except psycopg.OperationalError as exc:
            raise ConnectError(f"lost the database at {self.where}: {exc}") from exc


def _lock_key(component: str) -> int:
    # A stable 31-bit key per component (Python's hash() is salted per process).
    value = 0
    for char in component.encode():
        value = (value * 131 + char) % 0x7FFFFFFF
    return value


class Database:
    """One store's view of a `Pool`: its component's migrations and transactions."""

    def __init__(
        self,
        pool: Pool,
        *,
        prefix: str,
        migrations: Sequence[Sequence[str]],
        error: Callable[[str], Exception],
        adapt: Adapt | None = None,
    ) -> None:
        if not migrations:
            raise ValueError(f"{prefix}: a store needs at least one migration")
        self.prefix = prefix
        self.path = f"{pool.where} ({prefix})"
        self.version = len(migrations)
        self._pool: Pool | None = pool
        self._error = error
        self._adapt = adapt
        self._key = _lock_key(prefix)
        self._lock = threading.Lock()
        self._migrate(migrations)

    def _migrate(self, migrations: Sequence[Sequence[str]]) -> None:
        with self._live().connection() as conn:
            try:
                with conn.transaction():
                    conn.execute("SELECT pg_advisory_xact_lock(%s, 0)", (MIGRATION_LOCK,))
                    conn.execute(_VERSION_TABLE)
                    row = conn.execute(
                        "SELECT version FROM schema_version WHERE component = %s", (self.prefix,)
                    ).fetchone()
                    have = 0 if row is None else int(row[0])
                    if have > self.version:
                        raise NewerSchemaError(
                            f"{self.prefix}: the database at {self._live().where} has schema "
                            f"version {have}, newer than this yagent knows ({self.version}); "
                            "upgrade yagent"
                        )
                    for statements in migrations[have:]:
                        for statement in statements:
                            conn.execute(statement)
                    conn.execute(
                        "INSERT INTO schema_version (component, version) VALUES (%s, %s)"
                        " ON CONFLICT (component) DO UPDATE SET version = excluded.version",
                        (self.prefix, self.version),
                    )
            except psycopg.Error as exc:
                raise self._error(f"{self.prefix}: cannot migrate the schema: {exc}") from exc

    def _live(self) -> Pool:
        if self._pool is None:
            raise self._error(f"{self.prefix}: store {self.path!r} is closed")
        return self._pool

    def close(self) -> None:
        """Forget the pool (its owner closes it); later operations fail. Idempotent."""
        with self._lock:
            self._pool = None

    async def transact(self, fn: Callable[[Connection], T], *, write: bool) -> T:
        """Run `fn(conn)` as one transaction on a worker thread (see the module contract). The
        thread is never abandoned on cancellation: the caller learns the committed outcome."""
        return await anyio.to_thread.run_sync(self.run, fn, write)

    def run(self, fn: Callable[[Connection], T], write: bool) -> T:
        """The blocking form of `transact`."""
        with self.transaction(write=write) as conn:
            return fn(conn)

    @contextlib.contextmanager
    def transaction(self, *, write: bool) -> Iterator[Connection]:
        """One transaction (see the module contract) around the block, for a store whose
        operations are blocks rather than functions; the driver's errors become the store's."""
        try:
            with self._live().connection() as conn, conn.transaction():
                if write:
                    conn.execute(
                        "SELECT pg_advisory_xact_lock(%s, %s)", (MIGRATION_LOCK, self._key)
                    )
                else:
                    conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                row = conn.execute("SELECT extract(epoch FROM clock_timestamp())").fetchone()
                yield Connection(conn, float(row[0]) if row else 0.0, self._adapt)
        except ConnectError as exc:
            raise self._error(f"{self.prefix}: {exc}") from exc
        except psycopg.OperationalError as exc:
            raise self._error(f"{self.prefix}: lost the database: {exc}") from exc
        except psycopg.Error as exc:
            raise self._error(f"{self.prefix}: transaction failed: {exc}") from exc


class DatabaseStore:
    """A store that owns one `Database` (as `_db`): `path`, `close()`, context manager. Given a
    URL it opens (and on `close` closes) a pool of its own; given a `Pool`, it shares it."""

    _db: Database
    _own_pool: Pool | None = None

    def _open_db(
        self,
        where: str | Pool,
        *,
        prefix: str,
        migrations: Sequence[Sequence[str]],
        error: Callable[[str], Exception],
    ) -> None:
        pool = where if isinstance(where, Pool) else Pool(where)
        try:
            self._db = Database(pool, prefix=prefix, migrations=migrations, error=error)
        except BaseException:
            if pool is not where:
                pool.close()
            raise
        self._own_pool = None if pool is where else pool

    @property
    def path(self) -> str:
        return self._db.path

    def close(self) -> None:
        self._db.close()
        if self._own_pool is not None:
            self._own_pool.close()
            self._own_pool = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
