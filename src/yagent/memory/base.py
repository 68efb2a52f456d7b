"""The connection underneath every store method: one connection, one lock, one transaction each.

Threads share one connection behind a re-entrant lock (SQLite serialises writers anyway, and one
connection keeps `close()` simple and total). Processes coordinate through SQLite: every write is
one `BEGIN IMMEDIATE` transaction — the write lock is taken up front, so a per-session sequence read
and the insert that uses it can never interleave with another writer — and every read is one
deferred transaction, so a multi-query read (an export) sees one snapshot. The clock is read after
the lock is held, so timestamps follow commit order within a process. A store used from a forked
child refuses (`StoreClosedError`): the child must open its own. Transactions, savepoints and the
meaning of SQLite's failures are `kernel.durable.sqlitedb`'s synchronous core, the one every
SQLite store uses (docs/adr/0025-session-store-on-the-sqlite-core.md).

Seqs: the last seq this connection took per table and session is remembered between
transactions, so one writer reads a table's `MAX(seq)` once, not once per transaction. It is
trusted only while no other connection has committed to the file: the first seq a write
transaction takes checks `PRAGMA data_version` (which moves exactly when another connection —
another store object, another process — commits) under the write lock, and forgets every
remembered seq when it moved; they are read again. A transaction (or a call's savepoint) that
is undone forgets them too: the seqs it took were never stored
(docs/adr/0026-two-session-commits-per-step.md). The sessions' open tool calls
(`memory.opencalls`) are read with a session's first tool call seq and trusted, and forgotten,
exactly as the seqs are.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType
from typing import Protocol, Self

from yagent.kernel.durable import sqlitedb
from yagent.kernel.durable.clock import SystemClock as SystemClock
from yagent.memory.errors import (
    BatchFailedError,
    SessionNotFoundError,
    SessionStoreError,
    StoreClosedError,
)
from yagent.memory.opencalls import OpenCalls
from yagent.memory.records import Clock
from yagent.memory.schema import open_database, translate


class Numbered(Protocol):
    """A record handed to the store that learns its seq once stored (`memory.pending`)."""

    seq: int | None


class StoreBase:
    """Connection life cycle and the transaction helpers the record-kind parts build on."""

    # Whether what one transaction learnt may serve the next (seqs, open calls): not on a server
    # that cannot tell whether another writer committed since (`memory.pgstore`).
    KEEPS_BETWEEN_TRANSACTIONS = True

    def __init__(
        self,
        path: Path | str,
        *,
        clock: Clock | None = None,
        busy_timeout: float = 5.0,
        durable: bool = False,
    ) -> None:
        if isinstance(busy_timeout, bool) or not isinstance(busy_timeout, int | float):
            raise TypeError(f"busy_timeout must be seconds, got {busy_timeout!r}")
        if busy_timeout < 0:
            raise ValueError(f"busy_timeout must be >= 0, got {busy_timeout!r}")
        self._path = Path(path)
        self._clock: Clock = clock if clock is not None else SystemClock()
        self._lock = threading.RLock()
        self._pid = os.getpid()
        self._conn: sqlite3.Connection | None = None
        self._batch: sqlite3.Connection | None = None  # the open `batch()` transaction
        self._init_batch_state()
        conn, self._journal_mode = open_database(
            self._path, busy_timeout=float(busy_timeout), durable=durable
        )
        self._conn = conn

    def _init_batch_state(self) -> None:
        # Within the open batch only (cleared at its end and whenever a call in it is undone):
        # the sessions already marked written, and the content of the messages it wrote.
        self._touched: set[str] = set()
        self._written: dict[tuple[str, int], object] = {}
        self._whole = False  # the open batch stands or falls as one (no savepoint per call)
        self._failed: BaseException | None = None  # the first call that failed in a whole batch
        # Between transactions (see the module doc): (table, session) -> the last seq taken, the
        # file's data_version they hold for, and whether this transaction has checked it yet.
        self._seqs: dict[tuple[str, str], int] = {}
        self._data_version: int | None = None
        self._seqs_checked = False
        self._assigned: list[Numbered] = []  # pending messages given a seq in the open transaction
        self._open = OpenCalls()  # the sessions' open tool calls, trusted as the seqs are

    @property
    def path(self) -> Path:
        return self._path

    @property
    def journal_mode(self) -> str:
        """ "wal" normally; a file system without shared memory may leave SQLite in another mode,
        which is still correct (writes stay `BEGIN IMMEDIATE`), only less concurrent."""
        return self._journal_mode

    def close(self) -> None:
        """Close the connection; later calls raise `StoreClosedError`. Idempotent."""
        with self._lock:
            conn, self._conn = self._conn, None
            if conn is not None and self._pid == os.getpid():
                conn.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _live(self) -> sqlite3.Connection:
        if self._conn is None:
            raise StoreClosedError(f"session store {str(self._path)!r} is closed")
        if self._pid != os.getpid():
            raise StoreClosedError(
                f"session store {str(self._path)!r} was opened in process {self._pid}; "
                "a forked process must open its own SessionStore"
            )
        return self._conn

    @contextlib.contextmanager
    def batch(self, *, whole: bool = False) -> Iterator[None]:
        """One write transaction for every store call made inside it (by this thread), committed
        at its end: a step's records land together or not at all, for one fsync. A call inside
        that fails is undone alone (a savepoint) and raises as it would outside; an exception
        leaving the block rolls every call of the batch back. Nested batches join the outer one.
        `whole=True`: the batch stands or falls as one — no savepoint per call (two statements
        each); a call that fails raises as always, and the block then ends in a rollback and
        `BatchFailedError` (the failure as its cause) even when that failure was caught inside."""
        with self._lock:
            if self._batch is not None:
                yield
                return
            with self._transaction(write=True) as (conn, _):
                self._batch, self._whole, self._failed = conn, whole, None
                try:
                    yield
                    if self._failed is not None:
                        failed = self._failed
                        raise BatchFailedError(f"a call in the batch failed: {failed}") from failed
                finally:
                    self._batch, self._whole, self._failed = None, False, None
                    self._touched.clear()
                    self._written.clear()

    def _transaction(
        self, *, write: bool
    ) -> contextlib.AbstractContextManager[tuple[sqlite3.Connection, float]]:
        """One transaction of its own, or the open batch's (joined: see `batch`)."""
        if self._batch is None:
            return _Transaction(self, write)
        return self._joined(write)

    @contextlib.contextmanager
    def _joined(self, write: bool) -> Iterator[tuple[sqlite3.Connection, float]]:
        with self._lock:
            if self._batch is None:  # another thread's batch ended before this one held the lock
                with _Transaction(self, write) as own:
                    yield own
                return
            if self._whole:  # inside `batch(whole=True)`
                try:
                    yield self._batch, self._clock.now()
                except BaseException as exc:
                    self._failed = self._failed or exc  # the batch cannot commit now
                    raise
                return
            with self._savepoint(self._batch) as joined:  # inside `batch()`: a savepoint
                yield joined

    @contextlib.contextmanager
    def _savepoint(self, conn: sqlite3.Connection) -> Iterator[tuple[sqlite3.Connection, float]]:
        try:
            with sqlitedb.savepoint(conn, "store_call"):
                try:
                    yield conn, self._clock.now()
                except BaseException:
                    self._forget()  # what the undone call touched or wrote is no longer so
                    raise
        except sqlite3.DatabaseError as exc:
            raise _translate(self._path, exc) from exc

    def _forget(self) -> None:
        """Something was undone: what the batch knew, every remembered seq, and the seqs given
        to pending messages in the open transaction (a copy is stored where they were meant)."""
        self._touched.clear()
        self._written.clear()
        self._seqs.clear()
        self._open.clear()
        for message in self._assigned:
            message.seq = None
        self._assigned.clear()

    def _next_seq(self, conn: sqlite3.Connection, table: str, session_id: str) -> int:
        """`next_seq`, read once per table and session while no other connection commits: the
        write transaction holds the write lock from its first statement to its commit, and its
        first seq checks that nobody else wrote since the last (see the module doc)."""
        self._trust(conn)
        key = (table, session_id)
        last = self._seqs.get(key)
        if last is None:
            seq = next_seq(conn, table, session_id)
            if table == "tool_calls" and self.KEEPS_BETWEEN_TRANSACTIONS:
                self._open.load(conn, session_id)  # read with the seq, once, before its calls
        else:
            seq = last + 1
        self._seqs[key] = seq
        return seq

    def _trust(self, conn: sqlite3.Connection) -> None:
        """Once per write transaction, before anything remembered is used: forget it all when
        another connection committed since it was learnt."""
        if not self._seqs_checked:
            self._seqs_checked = True
            if not self._seqs_current(conn):
                self._seqs.clear()
                self._open.clear()

    def _seqs_current(self, conn: sqlite3.Connection) -> bool:
        """Whether the remembered seqs still hold: no other connection committed since they were
        taken (`PRAGMA data_version` moves exactly then; this connection's own commits leave it)."""
        version: int = conn.execute("PRAGMA data_version").fetchone()[0]
        current = version == self._data_version
        self._data_version = version
        return current

    def _touch(self, conn: sqlite3.Connection, session_id: str, now: float) -> None:
        """`touch`, once per session in a batch: its first call marks the session written (and
        refuses a missing one); the rest of the batch commits with it or not at all."""
        if self._batch is not None and session_id in self._touched:
            return
        touch(conn, session_id, now)
        if self._batch is not None:
            self._touched.add(session_id)

    def _remember(self, session_id: str, seq: int, content: object) -> None:
        """A message's content as this batch wrote it: what a reference to it is checked by."""
        if self._batch is not None:
            self._written[(session_id, seq)] = content

    def _written_content(self, session_id: str, seq: int) -> tuple[bool, object]:
        """(True, content) for a message written by the open batch, else (False, None)."""
        key = (session_id, seq)
        if self._batch is not None and key in self._written:
            return True, self._written[key]
        return False, None

    def _write(self) -> contextlib.AbstractContextManager[tuple[sqlite3.Connection, float]]:
        return self._transaction(write=True)

    def _read(self) -> contextlib.AbstractContextManager[tuple[sqlite3.Connection, float]]:
        return self._transaction(write=False)


class _Transaction:
    """A store call's own transaction (a class, not a generator: two a step). BEGIN under the
    store's lock; COMMIT at the end, ROLLBACK when the body raises (`sqlitedb.committed`). A
    transaction undone forgets what it took (`StoreBase._forget`); SQLite's failures become the
    store's errors."""

    __slots__ = ("_body", "_store", "_write")

    def __init__(self, store: StoreBase, write: bool) -> None:
        self._store, self._write = store, write

    def __enter__(self) -> tuple[sqlite3.Connection, float]:
        store = self._store
        store._lock.acquire()
        try:
            conn = store._live()
            try:
                sqlitedb.begin(conn, write=self._write)
            except sqlite3.Error as exc:
                raise _translate(store._path, exc) from exc
            store._seqs_checked = False
            self._body = sqlitedb.committed(conn)
            return conn, store._clock.now()
        except BaseException:
            store._lock.release()
            raise

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        store = self._store
        try:
            try:
                self._body.__exit__(exc_type, exc, tb)  # COMMIT, or ROLLBACK when it raised
            except BaseException as failed:  # the COMMIT failed (and was rolled back)
                store._forget()
                if isinstance(failed, sqlite3.DatabaseError):
                    raise _translate(store._path, failed) from failed
                raise
            if exc is not None:
                store._forget()  # nothing this transaction took or wrote is stored
                if isinstance(exc, sqlite3.DatabaseError):  # full disk, damage, busy
                    raise _translate(store._path, exc) from exc
                return
            store._assigned.clear()  # committed: the seqs given out are stored
        finally:
            store._lock.release()


def _translate(path: Path, exc: sqlite3.Error) -> SessionStoreError:
    return translate(str(path), exc, "session store operation failed on")


def touch(conn: sqlite3.Connection, session_id: str, now: float) -> None:
    """Mark the session as written now; `SessionNotFoundError` (inside the transaction, so the
    caller's insert rolls back with it) when there is no such session."""
    cursor = conn.execute(
        # CASE, not SQLite's two-argument MAX: the same statement runs on PostgreSQL (pgstore)
        "UPDATE sessions SET updated_at = CASE WHEN updated_at > ? THEN updated_at ELSE ? END"
        " WHERE id = ?",
        (now, now, session_id),
    )
    if cursor.rowcount == 0:
        raise SessionNotFoundError(session_id)


def require(conn: sqlite3.Connection, session_id: str) -> None:
    if conn.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone() is None:
        raise SessionNotFoundError(session_id)


def next_seq(conn: sqlite3.Connection, table: str, session_id: str) -> int:
    # Only called inside a write transaction: the write lock makes read-then-insert atomic.
    row = conn.execute(
        f"SELECT COALESCE(MAX(seq), 0) + 1 FROM {table} WHERE session_id = ?", (session_id,)
    ).fetchone()
    seq: int = row[0]
    return seq
