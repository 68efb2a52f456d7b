"""Opening the SQLite file: refuse what is not ours, then bring the schema up to date.

Order matters. The version is read *before* anything could change the file (journal mode, tables),
so a file from a newer yagent, another program's database or a non-database is refused without a
single byte modified. Migrations then run inside one `BEGIN IMMEDIATE` transaction that re-reads
the version (another process may have migrated meanwhile); each step is applied once, in order,
and the version row moves with it, so opening is idempotent and safe to race. The file is opened,
and its pragmas set, by `kernel.durable.sqlitedb.connect`; its failures mean what
`sqlitedb.failure` says, and a file that cannot be opened at all (`unopenable`: permissions, a
read-only directory — SQLite writes beside a WAL store to read it —, a missing directory) is
`StoreUnavailableError`, never `DamagedStoreError`: only SQLite's own verdict on the content
(corrupt, not a database) calls a store damaged.
"""

from __future__ import annotations

import errno
import os
import sqlite3
from pathlib import Path

from yagent.kernel.durable import sqlitedb, sqlitefile
from yagent.memory.errors import (
    DamagedStoreError,
    NewerSchemaError,
    SchemaError,
    SessionStoreError,
    StoreBusyError,
    StoreFullError,
    StoreUnavailableError,
)

# (version, statements): append a new entry to change the schema; never edit a shipped one.
MIGRATIONS: tuple[tuple[int, tuple[str, ...]], ...] = (
    (
        1,
        (
            """CREATE TABLE sessions (
                id TEXT PRIMARY KEY,
                created_at REAL NOT NULL,
                updated_at REAL NOT NULL,
                workspace TEXT NOT NULL,
                title TEXT NOT NULL,
                model TEXT NOT NULL,
                status TEXT NOT NULL
                    CHECK (status IN ('active', 'finished', 'failed', 'cancelled', 'paused')),
                meta TEXT NOT NULL)""",
            "CREATE INDEX sessions_recent ON sessions (updated_at, id)",
            """CREATE TABLE messages (
                session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
                seq INTEGER NOT NULL, ts REAL NOT NULL,
                agent TEXT NOT NULL, delegation_id TEXT NOT NULL, body TEXT NOT NULL,
                PRIMARY KEY (session_id, seq)) WITHOUT ROWID""",
            """CREATE TABLE events (
                session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
                seq INTEGER NOT NULL, ts REAL NOT NULL,
                type TEXT NOT NULL, delegation_id TEXT NOT NULL, payload TEXT NOT NULL,
                PRIMARY KEY (session_id, seq)) WITHOUT ROWID""",
            """CREATE TABLE tool_calls (
                session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
                seq INTEGER NOT NULL, call_id TEXT NOT NULL, name TEXT NOT NULL,
                arguments TEXT NOT NULL, delegation_id TEXT NOT NULL, started_at REAL NOT NULL,
                ended_at REAL, content TEXT, ok INTEGER, kind TEXT,
                PRIMARY KEY (session_id, seq)) WITHOUT ROWID""",
            "CREATE INDEX tool_calls_by_id ON tool_calls (session_id, call_id)",
            """CREATE TABLE usage (
                session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
                seq INTEGER NOT NULL, ts REAL NOT NULL,
                model TEXT NOT NULL, delegation_id TEXT NOT NULL,
                input_tokens INTEGER NOT NULL, output_tokens INTEGER NOT NULL,
                cache_read_tokens INTEGER NOT NULL, cache_write_tokens INTEGER NOT NULL,
                cost REAL,
                PRIMARY KEY (session_id, seq)) WITHOUT ROWID""",
            """CREATE TABLE checkpoints (
                session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
                seq INTEGER NOT NULL, ts REAL NOT NULL,
                delegation_id TEXT NOT NULL, step INTEGER NOT NULL, data TEXT NOT NULL,
                PRIMARY KEY (session_id, seq)) WITHOUT ROWID""",
            "CREATE INDEX checkpoints_latest ON checkpoints (session_id, delegation_id, seq)",
            """CREATE TABLE archive (
                session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
                seq INTEGER NOT NULL, ts REAL NOT NULL,
                kind TEXT NOT NULL, payload TEXT NOT NULL,
                PRIMARY KEY (session_id, seq)) WITHOUT ROWID""",
        ),
    ),
    # 2: a tool call's result may live in its tool message only (`content_message` = that
    # message's seq, `content` NULL) instead of a second copy; rows of version 1 keep theirs.
    (2, ("ALTER TABLE tool_calls ADD COLUMN content_message INTEGER",)),
    # 3: a session registered under a caller's key (a batch task's `<batch>/<task>`), found by it
    # in one indexed read from any process or machine on the same store (`keyed_session`).
    (
        3,
        (
            """CREATE TABLE session_keys (
                name TEXT PRIMARY KEY,
                session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE)
                WITHOUT ROWID""",
        ),
    ),
)


def latest_version() -> int:
    return MIGRATIONS[-1][0]


def read_version(conn: sqlite3.Connection, path: str) -> int:
    """The file's schema version (0: an empty file); refuses a file that is not ours."""
    try:
        names = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
        if "schema_version" not in names:
            if names:
                raise SchemaError(
                    f"{path!r} is an SQLite database of another program (it has tables but no "
                    "yagent schema_version): refusing to use it as a session store"
                )
            return 0
        row = conn.execute("SELECT version FROM schema_version").fetchone()
    except sqlite3.DatabaseError as exc:
        if sqlitedb.damaged(exc):
            raise DamagedStoreError(path, f"is not a readable SQLite database ({exc})") from exc
        raise translate(path, exc, "cannot read session store") from exc  # not damage
    if row is None or not isinstance(row[0], int):
        raise SchemaError(f"{path!r} has a damaged schema_version table")
    version: int = row[0]
    if version > latest_version():
        raise NewerSchemaError(path, version, latest_version())
    return version


def _migrate(conn: sqlite3.Connection, path: str) -> None:
    sqlitedb.begin(conn, write=True)
    with sqlitedb.committed(conn):
        current = read_version(conn, path)
        if current == 0:
            conn.execute(
                "CREATE TABLE schema_version (id INTEGER PRIMARY KEY CHECK (id = 1), "
                "version INTEGER NOT NULL)"
            )
            conn.execute("INSERT INTO schema_version (id, version) VALUES (1, 0)")
        for version, statements in MIGRATIONS:
            if version <= current:
                continue
            for statement in statements:
                conn.execute(statement)
            conn.execute("UPDATE schema_version SET version = ?", (version,))


def open_database(
    path: Path, *, busy_timeout: float, durable: bool
) -> tuple[sqlite3.Connection, str]:
    """An open, migrated connection (autocommit: callers BEGIN themselves), its journal mode.

    Opened by the one SQLite core (`kernel.durable.sqlitedb.connect`: file creation, WAL,
    foreign keys, synchronous, busy timeout), with the version read before any pragma could change
    the file."""
    where = os.fspath(path)
    try:  # conversations can hold secrets: the directory and the file are the owner's only
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as exc:
        raise translate(where, exc, "cannot create session store") from exc
    try:
        conn, journal = sqlitedb.connect(
            where,
            busy_timeout=busy_timeout,
            synchronous="FULL" if durable else "NORMAL",
            check=lambda conn: read_version(conn, where),
        )
    except sqlitefile.UnusableFileError as exc:
        raise DamagedStoreError(where, exc.why) from exc
    except (OSError, sqlite3.Error) as exc:
        raise translate(where, exc, "cannot open session store") from exc
    try:
        _migrate(conn, where)
    except sqlite3.Error as exc:
        conn.close()
        raise translate(where, exc, "cannot open session store") from exc
    except BaseException:
        conn.close()
        raise
    return conn, journal


def translate(path: str, exc: OSError | sqlite3.Error, doing: str) -> SessionStoreError:
    """The store's error for a failure of SQLite or the file system (`sqlitedb.failure`)."""
    kind = sqlitedb.failure(exc)
    if unopenable(exc):
        return StoreUnavailableError(path, str(exc))
    if kind == "full":
        return StoreFullError(path)
    if kind == "damaged":
        return DamagedStoreError(path, f"is damaged ({exc})")
    if kind == "busy":
        return StoreBusyError(f"{doing} {path!r}: busy beyond the busy timeout ({exc})")
    return SessionStoreError(f"{doing} {path!r}: {exc}")


_UNOPENABLE = frozenset({sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_PERM, sqlite3.SQLITE_AUTH})
_REFUSED = frozenset({errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOENT, errno.ENOTDIR})


def unopenable(exc: OSError | sqlite3.Error) -> bool:
    """Whether the file could not be opened at all (permissions, a read-only directory or file
    system, a missing directory) — which says nothing about its content."""
    if isinstance(exc, OSError):
        return exc.errno in _REFUSED
    code = getattr(exc, "sqlite_errorcode", None)
    return isinstance(code, int) and code & 0xFF in _UNOPENABLE
