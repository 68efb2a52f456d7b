"""sqlitedb: one SQLite file that several kernel stores and several processes can share safely.

Guarantees:
- WAL mode (readers never block the writer) with a busy timeout: a process that finds the write
  lock taken waits up to `busy_timeout` seconds, then the operation fails with the store's own
  error type (nothing changed) — never a wrong answer.
- Every operation is one transaction: writes begin with `BEGIN IMMEDIATE`, so the write lock is
  held before anything is read and two processes can never both judge the same rows as free;
  reads begin deferred. When the operation raises, the transaction rolls back: nothing is
  half-written. Operations run behind a per-object lock, on a worker thread (`anyio.to_thread`)
  whenever they could wait: a commit at synchronous FULL or EXTRA waits for the disk, and a
  writer may wait for another writer's lock. At synchronous NORMAL a commit does not wait for
  the disk (a WAL commit there costs tens of µs; the hop to a worker thread costs more), so an
  operation whose lock is free and whose write lock is free at once (`BEGIN IMMEDIATE` tried
  with no busy wait; the busy timeout is put back before anything that may wait, and only then)
  runs on the caller's thread; when either is taken it goes to the worker
  thread and waits there — the event loop is never blocked waiting for another writer. What an
  inline operation still does on the caller's thread: the operation itself, and the WAL
  checkpoint SQLite runs at a commit once the log passes its auto-checkpoint size (1 000
  pages) — the same as the session store, which writes on the caller's thread throughout
  (docs/adr/0023-sqlite-commits-that-cannot-wait-run-inline.md).
- `synchronous` is FULL by default (a commit survives power loss); NORMAL is accepted (survives
  a killed process); OFF is refused, because a store that may lose what it reported as committed
  cannot back any of the kernel's promises.
- Each store owns a table prefix: every table and index of its schema must start with
  `<prefix>_`, and `<prefix>_schema` records the schema version. Creation is idempotent; a file
  holding a version this code does not know is refused rather than misread. A store that adds
  tables names the versions it reads (`older`): their files get the new tables (the schema is
  idempotent creations only) and the current version, in the same transaction.
- A new file is created whole (`sqlitefile.create`); an empty (0-byte) or damaged file raises
  `sqlitefile.UnusableFileError` naming it — whatever the store's own error type — and is
  never written over.
- The synchronous core underneath (`connect`, `begin`, `committed`, `savepoint`, `failure`) is
  the one implementation of opening a file, its pragmas (WAL, synchronous, busy timeout, foreign
  keys), transactions (`BEGIN IMMEDIATE`, savepoints, rollback on any error) and the meaning of
  a failure (disk full, damaged file, busy): `Database` is built on it, and so is the session
  store (`memory.base`, which keeps its own schema migrations and unprefixed tables in the file
  it owns alone: docs/adr/0025-session-store-on-the-sqlite-core.md).
Leaves to the caller: the schema, the statements, and the error type its users see. Not offered:
safety across machines (SQLite locks are only as good as the filesystem) or across `fork()` of
an open connection (open one `Database` per process).
"""

from __future__ import annotations

import contextlib
import math
import os
import re
import sqlite3
import threading
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import Self, TypeVar

import anyio.to_thread

from yagent.kernel.durable import sqlitefile

T = TypeVar("T")

SYNC_MODES = frozenset({"FULL", "EXTRA", "NORMAL"})
_NAMED = re.compile(r"^\s*CREATE\s+(?:UNIQUE\s+)?(?:TABLE|INDEX)\s+IF\s+NOT\s+EXISTS\s+(\w+)", re.I)


class Database:
    """One connection to a SQLite file, used one transaction at a time."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        prefix: str,
        version: int,
        schema: Sequence[str],
        error: Callable[[str], Exception],
        invalid: Callable[[str], Exception] = ValueError,
        busy_timeout: float = 10.0,
        synchronous: str = "FULL",
        older: Sequence[int] = (),
    ) -> None:
        self._error = error
        self._older = frozenset(older)
        mode = str(synchronous).upper()
        if mode not in SYNC_MODES:
            raise invalid(
                f"{prefix}: synchronous must be one of {sorted(SYNC_MODES)}, got {synchronous!r}"
            )
        if (
            isinstance(busy_timeout, bool)
            or not isinstance(busy_timeout, int | float)
            or not math.isfinite(busy_timeout)
            or busy_timeout < 0
        ):
            raise invalid(
                f"{prefix}: busy_timeout must be finite seconds >= 0, got {busy_timeout!r}"
            )
        _check_schema(prefix, schema, invalid)
        self.prefix = prefix
        self.path = os.fspath(path)
        self._inline = mode == "NORMAL"  # a commit does not wait for the disk
        self._busy_ms = int(busy_timeout * 1000)
        self._waiting = True  # the connection's busy timeout is `busy_timeout` (False: 0)
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        try:
            self._conn, journal = connect(self.path, busy_timeout=busy_timeout, synchronous=mode)
            self._setup(journal, version, schema)
        except sqlite3.DatabaseError as exc:
            self.close()
            if failure(exc) == "damaged":
                raise sqlitefile.UnusableFileError(self.path, f"is damaged ({exc})") from exc
            raise error(f"{prefix}: cannot open {self.path!r}: {exc}") from exc
        except OSError as exc:
            self.close()
            raise error(f"{prefix}: cannot open {self.path!r}: {exc}") from exc
        except BaseException:
            self.close()
            raise

    def _setup(self, journal: str, version: int, schema: Sequence[str]) -> None:
        conn = self._connection()
        if journal != "wal" and not (self.path == ":memory:" and journal == "memory"):
            raise self._error(
                f"{self.prefix}: {self.path!r} cannot run in WAL mode (got {journal})"
            )
        table = f"{self.prefix}_schema"
        begin(conn, write=True)
        with committed(conn):
            conn.execute(f"CREATE TABLE IF NOT EXISTS {table} (version INTEGER NOT NULL)")
            for statement in schema:
                conn.execute(statement)
            row = conn.execute(f"SELECT version FROM {table}").fetchone()
            if row is None:
                conn.execute(f"INSERT INTO {table} (version) VALUES (?)", (version,))
            elif row[0] in self._older:
                conn.execute(f"UPDATE {table} SET version = ?", (version,))
            elif row[0] != version:
                raise self._error(
                    f"{self.prefix}: {self.path!r} has schema version {row[0]}, "
                    f"this code knows {version}"
                )

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            raise self._error(f"{self.prefix}: store {self.path!r} is closed")
        return self._conn

    def close(self) -> None:
        """Close the connection; later operations fail with the store's error. Idempotent."""
        with self._lock:
            conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()

    def __enter__(self) -> Database:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    async def transact(self, fn: Callable[[sqlite3.Connection], T], *, write: bool) -> T:
        """Run `fn(conn)` as one transaction on a worker thread; see the module contract.

        The worker thread is never abandoned on cancellation: the caller learns the committed
        outcome (cancellation is delivered at its next checkpoint) instead of losing it.
        """
        if self._inline and self._lock.acquire(blocking=False):
            try:
                if self._begin_at_once(write):
                    return self._finish(self._connection(), fn)
            finally:
                self._lock.release()
        return await anyio.to_thread.run_sync(self.run, fn, write)

    def _waits(self, conn: sqlite3.Connection, wait: bool) -> None:
        """The connection's busy timeout: the configured one (`wait`) or none, set only when it
        changes (held under `_lock`)."""
        if self._waiting is not wait:
            conn.execute(f"PRAGMA busy_timeout = {self._busy_ms if wait else 0}")
            self._waiting = wait

    def _begin_at_once(self, write: bool) -> bool:
        """Begin without waiting for another writer; False (nothing begun) when one holds the
        write lock. A read waits as configured (a WAL reader takes no lock a writer holds, but
        may wait out another connection's recovery). A write begins with no busy timeout and
        keeps none until something that may wait: once `BEGIN IMMEDIATE` holds the write lock of
        a WAL file, its statements and its COMMIT wait for no lock (the checkpoint a commit may
        run is passive), so consecutive inline writes set no timeout at all."""
        conn = self._connection()
        try:
            if not write:
                self._waits(conn, True)
                conn.execute("BEGIN")
                return True
            self._waits(conn, False)
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            if getattr(exc, "sqlite_errorcode", None) in (
                sqlite3.SQLITE_BUSY,
                sqlite3.SQLITE_LOCKED,
            ):
                return False
            raise self._error(f"{self.prefix}: cannot begin a transaction: {exc}") from exc
        except sqlite3.Error as exc:
            raise self._error(f"{self.prefix}: cannot begin a transaction: {exc}") from exc
        return True

    def run(self, fn: Callable[[sqlite3.Connection], T], write: bool) -> T:
        """The blocking form of `transact`, for callers already on a thread of their own."""
        with self._lock:
            conn = self._connection()
            try:
                self._waits(conn, True)  # here a writer waits for the lock, as configured
                begin(conn, write=write)
            except sqlite3.Error as exc:
                raise self._error(f"{self.prefix}: cannot begin a transaction: {exc}") from exc
            return self._finish(conn, fn)

    def _finish(self, conn: sqlite3.Connection, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run `fn` in the begun transaction and commit it; roll it back when anything raises."""
        try:
            with committed(conn):
                result = fn(conn)
        except sqlite3.Error as exc:
            if failure(exc) == "damaged":
                raise sqlitefile.UnusableFileError(self.path, f"is damaged ({exc})") from exc
            raise self._error(f"{self.prefix}: transaction failed: {exc}") from exc
        return result


class DatabaseStore:
    """A store that owns one `Database` (as `_db`): its `path`, `close()`, and use as a context
    manager — the part every SQLite store shares."""

    _db: Database

    @property
    def path(self) -> str:
        return self._db.path

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _check_schema(prefix: str, schema: Sequence[str], invalid: Callable[[str], Exception]) -> None:
    if not re.fullmatch(r"[a-z][a-z0-9]*", prefix):
        raise invalid(f"sqlitedb: prefix must be lowercase letters and digits, got {prefix!r}")
    for statement in schema:
        named = _NAMED.match(statement)
        if named is None:
            raise invalid(
                f"{prefix}: schema statements must be CREATE … IF NOT EXISTS: {statement!r}"
            )
        if not named.group(1).startswith(f"{prefix}_"):
            raise invalid(f"{prefix}: {named.group(1)!r} is not prefixed {prefix}_")


def connect(
    path: str,
    *,
    busy_timeout: float,
    synchronous: str,
    check: Callable[[sqlite3.Connection], object] | None = None,
) -> tuple[sqlite3.Connection, str]:
    """An open connection (autocommit: callers `begin` themselves; usable from any thread under
    the caller's lock) and its journal mode ("wal" normally; ":memory:" gives "memory", a file
    system without shared memory may give another, which the caller accepts or refuses).

    A new file is created whole (`sqlitefile.create`, not for ":memory:" or "file:" URIs).
    `check(conn)` runs before anything could change the file — a store refuses a file that is not
    its own there, without a byte modified. Then: WAL, foreign keys on, `synchronous` (one of
    `SYNC_MODES`), and the busy timeout (seconds). Raises `sqlite3.Error`, `OSError` or
    `sqlitefile.UnusableFileError` (a 0-byte or damaged file) for the caller to map; the connection
    is closed when anything fails."""
    mode = synchronous.upper()
    if mode not in SYNC_MODES:
        raise ValueError(f"synchronous must be one of {sorted(SYNC_MODES)}, got {synchronous!r}")
    if path != ":memory:" and not path.startswith("file:"):
        sqlitefile.create(path)
    conn = sqlite3.connect(
        path, timeout=busy_timeout, isolation_level=None, check_same_thread=False
    )
    try:
        if check is not None:
            check(conn)
        journal = str(conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]).lower()
        conn.execute("PRAGMA foreign_keys=ON")
        conn.execute(f"PRAGMA synchronous={mode}")
    except BaseException:
        conn.close()
        raise
    return conn, journal


def begin(conn: sqlite3.Connection, *, write: bool) -> None:
    """Begin a transaction: `BEGIN IMMEDIATE` for a write (the write lock is held before anything
    is read, waiting up to the busy timeout), a deferred `BEGIN` for a read (one snapshot)."""
    conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")


def committed(conn: sqlite3.Connection) -> contextlib.AbstractContextManager[None]:
    """The body of a begun transaction: COMMIT when it ends normally, ROLLBACK when anything
    raises (a failed COMMIT included) — nothing is half-written either way."""
    return _Committed(conn)


def savepoint(conn: sqlite3.Connection, name: str) -> contextlib.AbstractContextManager[None]:
    """A part of the open transaction that is undone alone when its body raises (the exception
    goes on); released into the transaction when it ends normally."""
    return _Savepoint(conn, name)


class _Committed:
    # A class, not a generator: the session store enters one per transaction, on the step's path.
    __slots__ = ("_conn",)

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def __enter__(self) -> None:
        return None

    def __exit__(self, exc_type: type[BaseException] | None, *_: object) -> None:
        if exc_type is not None:
            _rollback(self._conn)
            return
        try:
            self._conn.execute("COMMIT")
        except BaseException:
            _rollback(self._conn)
            raise


class _Savepoint:
    __slots__ = ("_conn", "_name")

    def __init__(self, conn: sqlite3.Connection, name: str) -> None:
        self._conn, self._name = conn, name

    def __enter__(self) -> None:
        self._conn.execute(f"SAVEPOINT {self._name}")

    def __exit__(self, exc_type: type[BaseException] | None, *_: object) -> None:
        if exc_type is None:
            self._conn.execute(f"RELEASE {self._name}")
            return
        with contextlib.suppress(sqlite3.Error):
            self._conn.execute(f"ROLLBACK TO {self._name}")
            self._conn.execute(f"RELEASE {self._name}")


def failure(exc: BaseException) -> str | None:
    """What a failure of SQLite or the file system means: "full" (the disk or the quota is full;
    the transaction did not happen), "damaged" (the file is corrupt or not a database), "busy"
    (another writer held the lock beyond the busy timeout), or None (anything else)."""
    if sqlitefile.disk_full(exc):  # SQLITE_FULL, ENOSPC or EDQUOT, in exc or its causes
        return "full"
    code = getattr(exc, "sqlite_errorcode", None)
    if not isinstance(exc, sqlite3.Error):
        return None
    if damaged(exc):
        return "damaged"
    text = str(exc)
    if code in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED) or "locked" in text or "busy" in text:
        return "busy"
    return None


def damaged(exc: sqlite3.Error) -> bool:
    """True when SQLite says the file itself is bad (corrupt, or not a database at all)."""
    code = getattr(exc, "sqlite_errorcode", None)
    return code in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB) or (
        code is None and ("malformed" in str(exc) or "not a database" in str(exc))
    )


def _rollback(conn: sqlite3.Connection) -> None:
    # A failed COMMIT may already have ended the transaction; the rollback is then a no-op error.
    with contextlib.suppress(sqlite3.Error):
        conn.execute("ROLLBACK")
