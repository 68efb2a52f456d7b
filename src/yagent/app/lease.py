"""Session leases: one live yagent process runs a session at a time.

Contract:
- A process takes a session's lease (in `durable.db`, table `lease_sessions`) before it runs or
  resumes anything in it, and keeps it while its app is open: a thread of its own renews it every
  `RENEW_EVERY` seconds for `LEASE_TTL` seconds. The row names the holder: a token unique to the
  app, its pid, the pid's start time and the host.
- `acquire` takes a free lease, renews one this holder has, and takes over one whose holder is
  gone: its lease expired, or it ran on this host and its pid is dead (or now belongs to another
  process — the start time differs). Otherwise it refuses with `SessionBusyError` (who holds it,
  where, until when) and writes nothing. Check and write are one `BEGIN IMMEDIATE` transaction:
  two processes can never both take the lease.
- Because calls left without a result are settled only after the lease is taken, a live
  process's in-flight call is never settled as "the process died" by a second one.
- A renewal that finds the lease taken over (this process was frozen past the TTL) calls the
  keeper's `on_lost` (from the renewing thread) and lists the session in `lost`: the host stops
  the run at its next step boundary and says so.
- With `[store] url` on PostgreSQL the table lives there (`app.pgstate`) and expiry is judged by
  the server's clock: one live process per session holds across machines.
Leaves to the host: when to take a lease, what to do when it is refused or lost. Not offered:
liveness across hosts before the TTL lapses (a pid means nothing on another machine).
"""

from __future__ import annotations

import contextlib
import os
import socket
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

import anyio.to_thread

from yagent.kernel.durable.sqlitedb import Database, DatabaseStore

T = TypeVar("T")

LEASE_TTL = 30.0
RENEW_EVERY = 10.0
_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS lease_sessions (
        session_id TEXT PRIMARY KEY,
        token TEXT NOT NULL,
        pid INTEGER NOT NULL,
        started TEXT NOT NULL,
        host TEXT NOT NULL,
        expires_at REAL NOT NULL
    )""",
)


class LeaseError(Exception):
    """The lease table could not be read or written."""


class SessionBusyError(Exception):
    """Another live process holds the session's lease; nothing was written."""

    def __init__(self, session_id: str, pid: int, host: str, expires_in: float) -> None:
        super().__init__(
            f"session {session_id[:12]} is already running in another yagent process (pid {pid} "
            f"on {host}); wait for it to end, or stop it — its lease lapses {expires_in:.0f}s "
            "after it stops renewing"
        )
        self.session_id, self.pid, self.host = session_id, pid, host


def process_start(pid: int) -> str:
    """The pid's start time in clock ticks since boot ("" when unknown): tells a reused pid."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return ""
    return stat.rsplit(")", 1)[-1].split()[19]


def _alive(pid: int, started: str) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return not started or process_start(pid) in ("", started)


@dataclass(frozen=True, slots=True)
class Holder:
    token: str
    pid: int
    started: str
    host: str

    @classmethod
    def this_process(cls) -> Holder:
        pid = os.getpid()
        return cls(uuid.uuid4().hex, pid, process_start(pid), socket.gethostname())


class Tables(Protocol):
    """One database a store's tables live in: `kernel.durable.sqlitedb.Database` (a file in the
    home) or `kernel.durable.pgdb.Database` (PostgreSQL, `app.pgstate`). Statements use `?`
    placeholders and the SQL both speak; a PostgreSQL connection also carries `now`, the server's
    clock."""

    path: str

    async def transact(self, fn: Callable[[Any], T], *, write: bool) -> T: ...

    def run(self, fn: Callable[[Any], T], write: bool) -> T: ...

    def close(self) -> None: ...


def db_now(conn: object) -> float:
    """The time a lease is judged by: the database server's clock when it gives one (one clock
    for every machine sharing it), this machine's otherwise."""
    now = getattr(conn, "now", None)
    return float(now) if isinstance(now, float) else time.time()


class SessionLeases(DatabaseStore):
    """The lease table (see the module contract)."""

    _db: Tables  # type: ignore[assignment]

    def __init__(self, path: str | os.PathLike[str], *, db: Tables | None = None) -> None:
        self._db = db or Database(path, prefix="lease", version=1, schema=_SCHEMA, error=LeaseError)

    async def acquire(self, session_id: str, holder: Holder, ttl: float = LEASE_TTL) -> None:
        def op(conn: sqlite3.Connection) -> None:
            now = db_now(conn)
            row = conn.execute(
                "SELECT token, pid, started, host, expires_at FROM lease_sessions"
                " WHERE session_id = ?",
                (session_id,),
            ).fetchone()
            if row is not None and row[0] != holder.token:
                _, pid, started, host, expires_at = row
                gone = host == holder.host and not _alive(pid, started)
                if expires_at > now and not gone:
                    raise SessionBusyError(session_id, pid, host, expires_at - now)
            conn.execute(
                "INSERT INTO lease_sessions (session_id, token, pid, started, host, expires_at)"
                " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (session_id) DO UPDATE SET"
                " token = excluded.token, pid = excluded.pid, started = excluded.started,"
                " host = excluded.host, expires_at = excluded.expires_at",
                (session_id, holder.token, holder.pid, holder.started, holder.host, now + ttl),
            )

        await self._db.transact(op, write=True)

    def renew(self, session_id: str, holder: Holder, ttl: float = LEASE_TTL) -> bool:
        """Extend this holder's lease; False when it is no longer theirs (blocking: the keeper
        renews from its own thread)."""

        def op(conn: sqlite3.Connection) -> bool:
            cursor = conn.execute(
                "UPDATE lease_sessions SET expires_at = ? WHERE session_id = ? AND token = ?",
                (db_now(conn) + ttl, session_id, holder.token),
            )
            return cursor.rowcount == 1

        return self._db.run(op, True)

    async def release(self, session_id: str, holder: Holder) -> None:
        def op(conn: sqlite3.Connection) -> None:
            conn.execute(
                "DELETE FROM lease_sessions WHERE session_id = ? AND token = ?",
                (session_id, holder.token),
            )

        await self._db.transact(op, write=True)


class LeaseKeeper:
    """The leases one app holds: taken once per session, renewed from a thread of its own (so a
    busy event loop never lets one lapse) until `close`."""

    def __init__(self, leases: SessionLeases, on_lost: Callable[[str], None]) -> None:
        self.leases = leases
        self.holder = Holder.this_process()
        self.held: set[str] = set()
        self.lost: set[str] = set()
        self._on_lost = on_lost
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    async def take(self, session_id: str) -> None:
        """Hold the session's lease (a no-op when this app holds it); `SessionBusyError`."""
        with self._lock:
            if session_id in self.held:
                return
        await self.leases.acquire(session_id, self.holder)
        with self._lock:
            self.held.add(session_id)
            self.lost.discard(session_id)
            if self._thread is None:
                self._thread = threading.Thread(target=self._renew, name="yagent-lease")
                self._thread.daemon = True
                self._thread.start()

    def _renew(self) -> None:
        while not self._stop.wait(RENEW_EVERY):
            with self._lock:
                sessions = sorted(self.held)
            for session_id in sessions:
                try:
                    kept = self.leases.renew(session_id, self.holder)
                except LeaseError:
                    continue  # the store hiccuped: the lease still has its TTL to run
                if not kept:
                    with self._lock:
                        self.held.discard(session_id)
                        self.lost.add(session_id)
                    self._on_lost(session_id)

    async def close(self) -> None:
        """Stop renewing and release every lease held (one not released lapses on its own)."""
        self._stop.set()
        if self._thread is not None:
            await anyio.to_thread.run_sync(self._thread.join)
        for session_id in sorted(self.held):
            with contextlib.suppress(LeaseError):
                await self.leases.release(session_id, self.holder)
        self.held.clear()
