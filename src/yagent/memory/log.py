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
either way. Every write here is `memory.pending`'s one write path with one record; several
records of a session go in one transaction through `write_records`.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Mapping
from typing import Any

from yagent.memory import codec
from yagent.memory.base import require
from yagent.memory.pending import (
    CONTENT_REF,
    PendingCall,
    PendingEvent,
    PendingMessage,
    PendingResult,
    RecordsPart,
    message_content,
)
from yagent.memory.records import MESSAGE_META_KEYS, EventRecord, ToolCallRecord


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
    out["content"] = message_content(conn, session_id, ref)
    return out


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
            content if ref is None else message_content(conn, session_id, ref),
            ok=None if ok is None else bool(ok),
            kind=kind,
        )
        for seq, call_id, name, arguments, d, started, ended, content, ok, kind, ref in rows
    ]


class ConversationPart(RecordsPart):
    def append_message(
        self,
        session_id: str,
        message: Mapping[str, Any],
        *,
        delegation_id: str = "",
        agent: str = "",
    ) -> int:
        """Store one message (a JSON object, e.g. {"role": ..., "content": ...}); its seq."""
        record = PendingMessage(message, agent, delegation_id)
        return self.write_records(session_id, (record,))[0]

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
        record = PendingEvent(type, payload, delegation_id, content_message)
        return self.write_records(session_id, (record,))[0]

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
        record = PendingCall(
            call_id=call_id,
            name=name,
            arguments=arguments,
            started_at=started_at,
            delegation_id=delegation_id,
        )
        return self.write_records(session_id, (record,))[0]

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
        record = PendingResult(
            call_id=call_id,
            content=content,
            ok=ok,
            kind=kind,
            ended_at=ended_at,
            delegation_id=delegation_id,
            content_message=content_message,
        )
        return self.write_records(session_id, (record,))[0]

    def tool_calls(
        self, session_id: str, *, delegation_id: str | None = None
    ) -> list[ToolCallRecord]:
        with self._read() as (conn, _):
            return query_tool_calls(conn, session_id, delegation_id)
