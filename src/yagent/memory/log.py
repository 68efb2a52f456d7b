"""The conversation log: messages, the rollout (events) and tool calls with their results.

Each kind has its own per-session `seq`, allocated inside the write transaction (1, 2, 3, … with no
gaps or duplicates, whatever the number of writing threads and processes). Reads return records in
`seq` order. A tool call is visible before its result (`ended_at is None`): a crash between the
two leaves exactly that fact behind. A result is matched to the earliest call with its `call_id`
that has none yet; when every such call has one, the latest is overwritten (a replayed second
output for the same call id wins, as the model saw it).

A tool result is stored once. `append_event(..., content_message=seq)` and
`record_tool_result(..., content_message=seq)` name the tool message that holds the same text:
when that message's `content` equals the payload's `content` (checked in the transaction), the
event keeps a reference (`CONTENT_REF`) and the call row `content_message` instead of a copy;
otherwise they keep their own. Reading resolves every reference: callers see the same records
either way.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Iterable, Mapping
from typing import Any

from yagent.memory import codec
from yagent.memory.base import StoreBase, require
from yagent.memory.codec import text_arg
from yagent.memory.errors import ToolCallNotFoundError
from yagent.memory.records import MESSAGE_META_KEYS, EventRecord, ToolCallRecord

# The key an event payload holds instead of `content` when its text lives in a tool message.
CONTENT_REF = "content_message"


def time_arg(value: object, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise TypeError(f"{what} must be a finite number of seconds, got {value!r}")
    return float(value)


def _delegation_filter(delegation_id: str | None) -> tuple[str, tuple[str, ...]]:
    return ("", ()) if delegation_id is None else (" AND delegation_id = ?", (delegation_id,))


def message_body(row: Mapping[str, Any]) -> dict[str, Any]:
    """A row from `messages()` without the store's keys: the message as it was appended."""
    return {key: value for key, value in row.items() if key not in MESSAGE_META_KEYS}


def query_messages(
    conn: sqlite3.Connection, session_id: str, delegation_id: str | None
) -> list[dict[str, Any]]:
    require(conn, session_id)
    extra, params = _delegation_filter(delegation_id)
    rows = conn.execute(
        "SELECT seq, ts, agent, delegation_id, body FROM messages WHERE session_id = ?"
        f"{extra} ORDER BY seq",
        (session_id, *params),
    )
    return [
        {**codec.decode_object(body), "seq": seq, "ts": ts, "agent": agent, "delegation_id": d}
        for seq, ts, agent, d, body in rows
    ]


def query_events(
    conn: sqlite3.Connection,
    session_id: str,
    *,
    since: int = 0,
    types: Iterable[str] | None = None,
    delegation_id: str | None = None,
) -> list[EventRecord]:
    require(conn, session_id)
    extra, params = _delegation_filter(delegation_id)
    if types is not None:
        wanted = tuple(types) if not isinstance(types, str) else (types,)
        extra += f" AND type IN ({', '.join('?' * len(wanted))})" if wanted else " AND 1 = 0"
        params += wanted
    rows = conn.execute(
        "SELECT seq, ts, type, delegation_id, payload FROM events "
        f"WHERE session_id = ? AND seq > ?{extra} ORDER BY seq",
        (session_id, since, *params),
    ).fetchall()
    return [
        EventRecord(seq, ts, kind, d, _resolved(conn, session_id, codec.decode_object(payload)))
        for seq, ts, kind, d, payload in rows
    ]


def _resolved(conn: sqlite3.Connection, session_id: str, payload: dict[str, Any]) -> dict[str, Any]:
    """An event payload with its referenced content back in place, where it was."""
    ref = payload.get(CONTENT_REF)
    if not isinstance(ref, int) or "content" in payload:
        return payload
    out = {key: value for key, value in payload.items() if key != CONTENT_REF}
    out["content"] = _message_content(conn, session_id, ref)
    return out


def _message_content(conn: sqlite3.Connection, session_id: str, seq: int) -> str | None:
    row = conn.execute(
        "SELECT body FROM messages WHERE session_id = ? AND seq = ?", (session_id, seq)
    ).fetchone()
    if row is None:
        return None
    content = codec.decode_object(row[0]).get("content")
    return content if isinstance(content, str) else None


def query_tool_calls(
    conn: sqlite3.Connection, session_id: str, delegation_id: str | None
) -> list[ToolCallRecord]:
    require(conn, session_id)
    extra, params = _delegation_filter(delegation_id)
    rows = conn.execute(
        "SELECT seq, call_id, name, arguments, delegation_id, started_at, ended_at, content, ok, "
        f"kind, content_message FROM tool_calls WHERE session_id = ?{extra} ORDER BY seq",
        (session_id, *params),
    ).fetchall()
    return [
        ToolCallRecord(
            seq,
            call_id,
            name,
            arguments,
            d,
            started,
            ended,
            content if ref is None else _message_content(conn, session_id, ref),
            ok=None if ok is None else bool(ok),
            kind=kind,
        )
        for seq, call_id, name, arguments, d, started, ended, content, ok, kind, ref in rows
    ]


class ConversationPart(StoreBase):
    def append_message(
        self,
        session_id: str,
        message: Mapping[str, Any],
        *,
        delegation_id: str = "",
        agent: str = "",
    ) -> int:
        """Store one message (a JSON object, e.g. {"role": ..., "content": ...}); its seq."""
        body = codec.normalise_object(message, "message")
        reserved = sorted(set(body) & set(MESSAGE_META_KEYS))
        if reserved:
            raise ValueError(
                f"message carries the store's own keys {reserved}; pass agent / delegation_id as "
                "arguments (message_body() strips a row read back from messages())"
            )
        values = (text_arg(agent, "agent"), text_arg(delegation_id, "delegation_id"))
        with self._write() as (conn, now):
            self._touch(conn, session_id, now)
            seq = self._next_seq(conn, "messages", session_id)
            conn.execute(
                "INSERT INTO messages (session_id, seq, ts, agent, delegation_id, body) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (session_id, seq, now, *values, codec.pack(codec.dumps(body))),
            )
            content = body.get("content")
            self._remember(session_id, seq, content if isinstance(content, str) else None)
            return seq

    def messages(
        self, session_id: str, *, delegation_id: str | None = None
    ) -> list[dict[str, Any]]:
        """Messages in order, each the stored object plus `seq`, `ts`, `agent`, `delegation_id`.
        `delegation_id=None` returns every run's messages; "" only the top-level run's."""
        with self._read() as (conn, _):
            return query_messages(conn, session_id, delegation_id)

    def append_event(
        self,
        session_id: str,
        type: str,
        payload: Mapping[str, Any],
        *,
        delegation_id: str = "",
        content_message: int | None = None,
    ) -> int:
        """Append one rollout record; its seq. `content_message`: the seq of a message that may
        hold the payload's `content` (kept by reference when it does; see the module doc)."""
        body = codec.normalise_object(payload, "event payload")
        if CONTENT_REF in body:
            raise ValueError(f"event payload carries the store's own key {CONTENT_REF!r}")
        values = (text_arg(type, "event type"), text_arg(delegation_id, "delegation_id"))
        with self._write() as (conn, now):
            self._touch(conn, session_id, now)
            if self._same_content(conn, session_id, content_message, body.get("content")):
                body = {k: v for k, v in body.items() if k != "content"}
                body[CONTENT_REF] = content_message
            seq = self._next_seq(conn, "events", session_id)
            conn.execute(
                "INSERT INTO events (session_id, seq, ts, type, delegation_id, payload) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (session_id, seq, now, *values, codec.pack(codec.dumps(body))),
            )
            return seq

    def events(
        self,
        session_id: str,
        *,
        since: int = 0,
        types: Iterable[str] | None = None,
        delegation_id: str | None = None,
    ) -> list[EventRecord]:
        """Rollout records with seq > `since`, optionally only these types (a str is one type)
        and only this delegation ("" = the top-level run)."""
        with self._read() as (conn, _):
            return query_events(
                conn, session_id, since=since, types=types, delegation_id=delegation_id
            )

    def record_tool_call(
        self,
        session_id: str,
        *,
        call_id: str,
        name: str,
        arguments: str,
        delegation_id: str = "",
        started_at: float,
    ) -> int:
        """Record a call before it runs (`arguments` as the model sent them); its seq."""
        values = (
            text_arg(call_id, "call_id"),
            text_arg(name, "name"),
            text_arg(arguments, "arguments"),
            text_arg(delegation_id, "delegation_id"),
            time_arg(started_at, "started_at"),
        )
        with self._write() as (conn, now):
            self._touch(conn, session_id, now)
            seq = self._next_seq(conn, "tool_calls", session_id)
            conn.execute(
                "INSERT INTO tool_calls (session_id, seq, call_id, name, arguments, "
                "delegation_id, started_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (session_id, seq, *values),
            )
            return seq

    def record_tool_result(
        self,
        session_id: str,
        call_id: str,
        *,
        content: str,
        ok: bool,
        kind: str | None,
        ended_at: float,
        delegation_id: str | None = None,
        content_message: int | None = None,
    ) -> int:
        """Attach a result to a recorded call (see the module docstring for which); the call's
        seq. `delegation_id` narrows the match when runs may reuse call ids; `content_message`
        names the tool message that may hold `content` (then kept by reference)."""
        if not isinstance(ok, bool):
            raise TypeError(f"ok must be a bool, got {ok!r}")
        if kind is not None:
            text_arg(kind, "kind")
        values = (time_arg(ended_at, "ended_at"), text_arg(content, "content"), int(ok), kind)
        extra, params = _delegation_filter(delegation_id)
        with self._write() as (conn, now):
            self._touch(conn, session_id, now)
            # The call's rows are found through `tool_calls_by_id` first: asked for a column the
            # index lacks, SQLite's planner would otherwise walk every call of the session.
            row = conn.execute(
                "SELECT seq FROM tool_calls WHERE session_id = ? AND seq IN (SELECT seq FROM "
                f"tool_calls WHERE session_id = ? AND call_id = ?){extra} "
                "ORDER BY ended_at IS NOT NULL, CASE WHEN ended_at IS NULL THEN seq ELSE -seq END "
                "LIMIT 1",
                (session_id, session_id, text_arg(call_id, "call_id"), *params),
            ).fetchone()
            if row is None:
                raise ToolCallNotFoundError(session_id, call_id)
            ref = (
                content_message
                if self._same_content(conn, session_id, content_message, content)
                else None
            )
            stored = values if ref is None else (values[0], None, *values[2:])
            conn.execute(
                "UPDATE tool_calls SET ended_at = ?, content = ?, ok = ?, kind = ?, "
                "content_message = ? WHERE session_id = ? AND seq = ?",
                (*stored, ref, session_id, row[0]),
            )
            seq: int = row[0]
            return seq

    def _same_content(
        self, conn: sqlite3.Connection, session_id: str, seq: int | None, content: object
    ) -> bool:
        """Whether message `seq` holds `content`: known without a read when this batch wrote it."""
        if seq is None:
            return False
        known, written = self._written_content(session_id, seq)
        if known:
            return written == content
        return _message_content(conn, session_id, seq) == content

    def tool_calls(
        self, session_id: str, *, delegation_id: str | None = None
    ) -> list[ToolCallRecord]:
        with self._read() as (conn, _):
            return query_tool_calls(conn, session_id, delegation_id)
