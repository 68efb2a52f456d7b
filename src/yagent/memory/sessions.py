"""Sessions: creation with a sortable unique id, lookup by unique prefix, listing, status, title.

A session id is 26 lowercase hex digits: 12 of milliseconds since the epoch, then 14 random ones —
ids sort by creation time and need no coordination between processes. Within one process ids are
strictly increasing even when the clock stands still or steps back (the random part is bumped).
`get_session` accepts any unique prefix (case-insensitive); every other method takes the full id.
A session may also be registered under a caller's key (`keyed_session`: get-or-create, atomic
across processes sharing the store) and found by it in one indexed read (`session_by_key`); the key
is gone with its session.
"""

from __future__ import annotations

import secrets
import sqlite3
import threading
from collections.abc import Mapping
from typing import Any

from yagent.memory import codec
from yagent.memory.base import StoreBase
from yagent.memory.codec import text_arg
from yagent.memory.errors import AmbiguousSessionError, SessionNotFoundError
from yagent.memory.records import STATUSES, SessionInfo

_RANDOM_BITS = 56
_CANDIDATES_SHOWN = 10
_id_lock = threading.Lock()
_last_id: tuple[int, int] = (0, 0)


def new_session_id(now: float) -> str:
    global _last_id
    millis = max(int(now * 1000), 0)
    with _id_lock:
        last_millis, last_random = _last_id
        if millis > last_millis:
            random_part = secrets.randbits(_RANDOM_BITS - 1)  # headroom for in-millisecond bumps
        else:
            millis, random_part = last_millis, last_random + 1
            if random_part >= 1 << _RANDOM_BITS:
                millis, random_part = millis + 1, 0
        _last_id = (millis, random_part)
    return f"{millis:012x}{random_part:014x}"


def check_status(status: object) -> str:
    if status not in STATUSES:
        raise ValueError(f"status must be one of {', '.join(STATUSES)}; got {status!r}")
    return str(status)


_COLUMNS = "id, created_at, updated_at, workspace, title, model, status, meta"


def session_from_row(row: sqlite3.Row | tuple[Any, ...]) -> SessionInfo:
    return SessionInfo(
        id=row[0],
        created_at=row[1],
        updated_at=row[2],
        workspace=row[3],
        title=row[4],
        model=row[5],
        status=row[6],
        meta=codec.decode_object(row[7]),
    )


def load_session(conn: sqlite3.Connection, session_id: str) -> SessionInfo:
    row = conn.execute(f"SELECT {_COLUMNS} FROM sessions WHERE id = ?", (session_id,)).fetchone()
    if row is None:
        raise SessionNotFoundError(session_id)
    return session_from_row(row)


def _key(key: object) -> str:
    name = text_arg(key, "key")
    if not name:
        raise ValueError("a session key must not be empty")
    return name


def _keyed(conn: sqlite3.Connection, name: str) -> SessionInfo | None:
    row = conn.execute(
        f"SELECT {', '.join('s.' + c for c in _COLUMNS.split(', '))} FROM session_keys k"
        " JOIN sessions s ON s.id = k.session_id WHERE k.name = ?",
        (name,),
    ).fetchone()
    return None if row is None else session_from_row(row)


class SessionsPart(StoreBase):
    def create_session(
        self,
        *,
        workspace: str,
        title: str = "",
        model: str = "",
        meta: Mapping[str, Any] | None = None,
    ) -> SessionInfo:
        """A new `active` session."""
        fields = (
            text_arg(workspace, "workspace"),
            text_arg(title, "title"),
            text_arg(model, "model"),
            codec.encode_object({} if meta is None else meta, "meta"),
        )
        with self._write() as (conn, now):
            session_id = new_session_id(now)
            conn.execute(
                f"INSERT INTO sessions ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, 'active', ?)",
                (session_id, now, now, fields[0], fields[1], fields[2], fields[3]),
            )
            return load_session(conn, session_id)

    def keyed_session(
        self,
        key: str,
        *,
        workspace: str,
        title: str = "",
        model: str = "",
        meta: Mapping[str, Any] | None = None,
    ) -> tuple[SessionInfo, bool]:
        """The session registered under `key`, created (`active`, with these fields) when there
        is none: `(session, created)`. The lookup and the insert are one write transaction, so
        processes (or machines, on PostgreSQL) racing for one key get one session."""
        name = _key(key)
        fields = (
            text_arg(workspace, "workspace"),
            text_arg(title, "title"),
            text_arg(model, "model"),
            codec.encode_object({} if meta is None else meta, "meta"),
        )
        with self._write() as (conn, now):
            found = _keyed(conn, name)
            if found is not None:
                return found, False
            session_id = new_session_id(now)
            conn.execute(
                f"INSERT INTO sessions ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, 'active', ?)",
                (session_id, now, now, fields[0], fields[1], fields[2], fields[3]),
            )
            conn.execute(
                "INSERT INTO session_keys (name, session_id) VALUES (?, ?)", (name, session_id)
            )
            return load_session(conn, session_id), True

    def session_by_key(self, key: str) -> SessionInfo | None:
        """The session `keyed_session` registered under `key`, or None (one indexed read)."""
        name = _key(key)
        with self._read() as (conn, _):
            return _keyed(conn, name)

    def get_session(self, id_or_prefix: str) -> SessionInfo:
        """The session with this id, or the only one whose id starts with it.

        Raises `SessionNotFoundError` when none matches (or the prefix is empty) and
        `AmbiguousSessionError` listing the candidates when several do."""
        key = text_arg(id_or_prefix, "session id").strip().lower()
        if not key:
            raise SessionNotFoundError(id_or_prefix)
        with self._read() as (conn, _):
            # U+10FFFF sorts after every character an id can hold: a range scan on the key.
            rows = conn.execute(
                "SELECT id FROM sessions WHERE id >= ? AND id < ? ORDER BY id",
                (key, key + "\U0010ffff"),
            ).fetchall()
            ids = [row[0] for row in rows]
            if key in ids:
                return load_session(conn, key)
            if not ids:
                raise SessionNotFoundError(id_or_prefix)
            if len(ids) > 1:
                raise AmbiguousSessionError(key, tuple(ids[:_CANDIDATES_SHOWN]), len(ids))
            return load_session(conn, ids[0])

    def list_sessions(
        self, *, limit: int | None = 20, workspace: str | None = None
    ) -> list[SessionInfo]:
        """Sessions, most recently active (written) first; `limit=None` lists all."""
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int)):
            raise TypeError(f"limit must be an int or None, got {limit!r}")
        params: list[object] = [] if workspace is None else [workspace]
        where = "" if workspace is None else "WHERE workspace = ?"
        query = f"SELECT {_COLUMNS} FROM sessions {where} ORDER BY updated_at DESC, id DESC"
        if limit is not None:
            query += " LIMIT ?"
            params.append(max(limit, 0))
        with self._read() as (conn, _):
            return [session_from_row(row) for row in conn.execute(query, params)]

    def set_status(self, session_id: str, status: str) -> None:
        value = check_status(status)
        with self._write() as (conn, now):
            self._touch(conn, session_id, now)
            conn.execute("UPDATE sessions SET status = ? WHERE id = ?", (value, session_id))

    def set_title(self, session_id: str, title: str) -> None:
        value = text_arg(title, "title")
        with self._write() as (conn, now):
            self._touch(conn, session_id, now)
            conn.execute("UPDATE sessions SET title = ? WHERE id = ?", (value, session_id))
