"""Records handed to the store: the one write path of the conversation log and the usage ledger.

Contract:
- `write_records(session_id, records)` stores one session's events, messages, usage records,
  tool calls and tool results in ONE write transaction, in the order given: each kind's seqs
  follow the list's order (a rollout written this way keeps publish order). It returns each
  record's seq (for a result, its call's). Every record is checked — JSON objects (`codec`),
  text, numbers — before the transaction opens: a refused record raises `TypeError` /
  `ValueError` and nothing is written. Inside the transaction, a result whose call is not on
  record raises `ToolCallNotFoundError` and nothing of it is written.
- The per-record methods (`append_event`, `append_message`, `add_usage`, `record_tool_call`,
  `record_tool_result`) are this path with one record each; inside `batch()` a call joins the
  batch as before.
- A `PendingMessage` is its own handle: `seq` is None until the transaction that stores it
  commits, then its seq — and None again for good when that transaction (or its batch) is
  undone. An event or a result naming it as `content_message` keeps a reference (`CONTENT_REF`,
  the call row's `content_message`) instead of its own `content` when the message is stored —
  in this transaction or a committed one — with exactly that content: compared in memory, the
  message never read back. An int `content_message` (a stored message's seq) is checked against
  the message in the transaction, as it always was.
- A result is matched to the earliest call with its `call_id` (and delegation, when given) that
  has none yet; when every such call has one, the latest is overwritten. Where this connection
  knows the session's open calls (`memory.opencalls`: SQLite, nobody else wrote since), the rule
  is answered from memory and the call's row updated by its key; otherwise one `UPDATE …
  RETURNING` asks SQLite the same rule.
Cost: one statement per record — one `executemany` per table, one `UPDATE` per result — one
`touch` per transaction, and the seq check of `memory.base`; the JSON of each record is encoded
once (`codec.encode_object`), copied only when a reference replaces its text.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from yagent.memory import codec
from yagent.memory.base import StoreBase
from yagent.memory.codec import text_arg
from yagent.memory.errors import ToolCallNotFoundError
from yagent.memory.records import MESSAGE_META_KEYS

# The key an event payload holds instead of `content` when its text lives in a tool message.
CONTENT_REF = "content_message"
TOKEN_FIELDS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")


@dataclass(slots=True, eq=False)
class PendingMessage:
    """A message to append (a JSON object); `seq` once stored (see the module contract)."""

    body: Mapping[str, Any]
    agent: str = ""
    delegation_id: str = ""
    seq: int | None = field(default=None, init=False)
    content: str | None = field(default=None, init=False, repr=False)  # as stored, when text


@dataclass(slots=True, eq=False)
class PendingEvent:
    """A rollout record; `content_message` may hold its `content` (kept by reference)."""

    type: str
    payload: Mapping[str, Any]
    delegation_id: str = ""
    content_message: PendingMessage | int | None = None


@dataclass(slots=True, eq=False, kw_only=True)
class PendingUsage:
    """One model call's usage; `cost=None` means unknown (never read as 0)."""

    model: str
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost: float | None
    delegation_id: str = ""


@dataclass(slots=True, eq=False, kw_only=True)
class PendingCall:
    """A tool call before it runs (`arguments` as the model sent them)."""

    call_id: str
    name: str
    arguments: str
    started_at: float
    delegation_id: str = ""


@dataclass(slots=True, eq=False, kw_only=True)
class PendingResult:
    """A result for a recorded call; `delegation_id` None matches the call in any delegation."""

    call_id: str
    content: str
    ok: bool
    kind: str | None
    ended_at: float
    delegation_id: str | None = None
    content_message: PendingMessage | int | None = None


Pending = PendingEvent | PendingMessage | PendingUsage | PendingCall | PendingResult


def time_arg(value: object, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise TypeError(f"{what} must be a finite number of seconds, got {value!r}")
    return float(value)


def count_arg(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{what} must be an int, got {value!r}")
    if value < 0:
        raise ValueError(f"{what} must be >= 0, got {value}")
    return value


def cost_arg(value: object) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise TypeError(f"cost must be a finite number or None (unknown), got {value!r}")
    if value < 0:
        raise ValueError(f"cost must be >= 0, got {value}")
    return float(value)


def message_content(conn: sqlite3.Connection, session_id: str, seq: int) -> str | None:
    """The stored message's `content` when it is text, else None."""
    row = conn.execute(
        "SELECT body FROM messages WHERE session_id = ? AND seq = ?", (session_id, seq)
    ).fetchone()
    if row is None:
        return None
    content = codec.decode_object(row[0]).get("content")
    return content if isinstance(content, str) else None


_META_KEYS = frozenset(MESSAGE_META_KEYS)

# What `_check` makes of each record: a tuple whose first item says which kind it is.
_EVENT, _MESSAGE, _USAGE, _CALL, _RESULT = range(5)


def _event(record: PendingEvent) -> tuple[Any, ...]:
    kind = text_arg(record.type, "event type")
    delegation = text_arg(record.delegation_id, "delegation_id")
    payload, ref = record.payload, record.content_message
    if ref is None and type(payload) is dict and CONTENT_REF not in payload:
        # no reference possible: encoded now, once, without a copy
        text = codec.encode_object(payload, "event payload")
        return (_EVENT, kind, delegation, codec.pack(text), None)
    values = (kind, delegation)
    body = codec.normalise_object(payload, "event payload")  # a copy: may lose its content
    if CONTENT_REF in body:
        raise ValueError(f"event payload carries the store's own key {CONTENT_REF!r}")
    if ref is None:
        return (_EVENT, *values, codec.pack(codec.dumps(body)), None)
    return (_EVENT, *values, body, ref)


def _message(record: PendingMessage) -> tuple[Any, ...]:
    body = record.body
    text = codec.encode_object(body, "message")  # refuses a body that is not an object
    if not _META_KEYS.isdisjoint(body):
        reserved = sorted(_META_KEYS.intersection(body))
        raise ValueError(
            f"message carries the store's own keys {reserved}; pass agent / delegation_id as "
            "arguments (message_body() strips a row read back from messages())"
        )
    content = body.get("content")
    return (
        _MESSAGE,
        text_arg(record.agent, "agent"),
        text_arg(record.delegation_id, "delegation_id"),
        codec.pack(text),
        content if isinstance(content, str) else None,
        record,
    )


def _usage(record: PendingUsage) -> tuple[Any, ...]:
    return (
        _USAGE,
        text_arg(record.model, "model"),
        text_arg(record.delegation_id, "delegation_id"),
        count_arg(record.input_tokens, "input_tokens"),
        count_arg(record.output_tokens, "output_tokens"),
        count_arg(record.cache_read_tokens, "cache_read_tokens"),
        count_arg(record.cache_write_tokens, "cache_write_tokens"),
        cost_arg(record.cost),
    )


def _call(record: PendingCall) -> tuple[Any, ...]:
    return (
        _CALL,
        text_arg(record.call_id, "call_id"),
        text_arg(record.name, "name"),
        text_arg(record.arguments, "arguments"),
        text_arg(record.delegation_id, "delegation_id"),
        time_arg(record.started_at, "started_at"),
    )


def _result(record: PendingResult) -> tuple[Any, ...]:
    if not isinstance(record.ok, bool):
        raise TypeError(f"ok must be a bool, got {record.ok!r}")
    if record.kind is not None:
        text_arg(record.kind, "kind")
    delegation = record.delegation_id
    return (
        _RESULT,
        text_arg(record.call_id, "call_id"),
        time_arg(record.ended_at, "ended_at"),
        text_arg(record.content, "content"),
        int(record.ok),
        record.kind,
        None if delegation is None else text_arg(delegation, "delegation_id"),
        record.content_message,
    )


_CHECKS: dict[type, Any] = {
    PendingEvent: _event,
    PendingMessage: _message,
    PendingUsage: _usage,
    PendingCall: _call,
    PendingResult: _result,
}


def _check(record: Pending) -> tuple[Any, ...]:
    """A record's checked values (see the module contract); raises before any write."""
    check = _CHECKS.get(type(record))
    if check is None:
        raise TypeError(f"not a record the store writes: {type(record).__name__}")
    values: tuple[Any, ...] = check(record)
    return values


_INSERT = {
    "events": "INSERT INTO events (session_id, seq, ts, type, delegation_id, payload) "
    "VALUES (?, ?, ?, ?, ?, ?)",
    "messages": "INSERT INTO messages (session_id, seq, ts, agent, delegation_id, body) "
    "VALUES (?, ?, ?, ?, ?, ?)",
    "usage": "INSERT INTO usage (session_id, seq, ts, model, delegation_id, input_tokens, "
    "output_tokens, cache_read_tokens, cache_write_tokens, cost) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    "tool_calls": "INSERT INTO tool_calls (session_id, seq, call_id, name, arguments, "
    "delegation_id, started_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
}
# The call's rows are found through `tool_calls_by_id` first: asked for a column the index
# lacks, SQLite's planner would otherwise walk every call of the session.
_RESULT_SQL = (
    "UPDATE tool_calls SET ended_at = ?, content = ?, ok = ?, kind = ?, content_message = ? "
    "WHERE session_id = ? AND seq = (SELECT seq FROM tool_calls WHERE session_id = ? AND seq IN "
    "(SELECT seq FROM tool_calls WHERE session_id = ? AND call_id = ?){} "
    "ORDER BY ended_at IS NOT NULL, CASE WHEN ended_at IS NULL THEN seq ELSE -seq END LIMIT 1) "
    "RETURNING seq"
)
_RESULT_ANY = _RESULT_SQL.format("")
_RESULT_IN = _RESULT_SQL.format(" AND delegation_id = ?")
_RESULT_AT = (  # the call the rule picks is known (`memory.opencalls`)
    "UPDATE tool_calls SET ended_at = ?, content = ?, ok = ?, kind = ?, content_message = ? "
    "WHERE session_id = ? AND seq = ?"
)


class RecordsPart(StoreBase):
    def write_records(self, session_id: str, records: Sequence[Pending]) -> list[int]:
        """Store `records` of one session in one transaction, in order; their seqs (see the
        module contract)."""
        checked = [_check(record) for record in records]
        if not checked:
            return []
        with self._write() as (conn, now):
            self._touch(conn, session_id, now)
            return self._insert(conn, session_id, now, checked)

    def _insert(
        self, conn: sqlite3.Connection, session_id: str, now: float, checked: list[tuple[Any, ...]]
    ) -> list[int]:
        seqs: list[int] = []
        rows: dict[str, list[tuple[Any, ...]]] = {}
        results: list[tuple[int, tuple[Any, ...]]] = []
        next_seq = self._next_seq
        for item in checked:
            tag = item[0]
            if tag == _EVENT:
                _, kind, delegation, body, ref = item
                if ref is not None:
                    body = self._event_text(conn, session_id, body, ref)
                seq = next_seq(conn, "events", session_id)
                rows.setdefault("events", []).append((session_id, seq, now, kind, delegation, body))
            elif tag == _MESSAGE:
                _, agent, delegation, body, content, record = item
                seq = next_seq(conn, "messages", session_id)
                rows.setdefault("messages", []).append(
                    (session_id, seq, now, agent, delegation, body)
                )
                self._remember(session_id, seq, content)
                record.seq, record.content = seq, content
                self._assigned.append(record)
            elif tag == _USAGE:
                seq = next_seq(conn, "usage", session_id)
                rows.setdefault("usage", []).append((session_id, seq, now, *item[1:]))
            elif tag == _CALL:
                seq = next_seq(conn, "tool_calls", session_id)
                rows.setdefault("tool_calls", []).append((session_id, seq, *item[1:]))
                self._open.add(session_id, item[4], item[1], seq)
            else:
                results.append((len(seqs), item))
                seq = 0  # the call's, once found
            seqs.append(seq)
        for table, table_rows in rows.items():
            if len(table_rows) == 1:
                conn.execute(_INSERT[table], table_rows[0])
            else:
                conn.executemany(_INSERT[table], table_rows)
        for index, item in results:
            seqs[index] = self._result(conn, session_id, item)
        return seqs

    def _event_text(
        self,
        conn: sqlite3.Connection,
        session_id: str,
        body: dict[str, Any],
        ref: PendingMessage | int,
    ) -> str | bytes:
        seq = self._same_content(conn, session_id, ref, body.get("content"))
        if seq is not None:
            del body["content"]
            body[CONTENT_REF] = seq
        return codec.pack(codec.dumps(body))

    def _result(self, conn: sqlite3.Connection, session_id: str, item: tuple[Any, ...]) -> int:
        _, call_id, ended_at, content, ok, kind, delegation, ref = item
        seq = self._same_content(conn, session_id, ref, content)
        stored = content if seq is None else None
        call = self._open_call(conn, session_id, delegation, call_id)
        if call is not None:  # the rule answered from memory: the call's row, by its key
            conn.execute(_RESULT_AT, (ended_at, stored, ok, kind, seq, session_id, call))
            return call
        params: tuple[Any, ...] = (ended_at, stored, ok, kind, seq, session_id, session_id)
        params += (session_id, call_id) if delegation is None else (session_id, call_id, delegation)
        row = conn.execute(_RESULT_ANY if delegation is None else _RESULT_IN, params).fetchone()
        if row is None:
            raise ToolCallNotFoundError(session_id, call_id)
        found: int = row[0]
        self._open.closed(session_id, call_id, found)
        return found

    def _open_call(
        self, conn: sqlite3.Connection, session_id: str, delegation: str | None, call_id: str
    ) -> int | None:
        """The call the matching rule picks, when this connection knows the session's open
        calls (`memory.opencalls`); None: ask SQLite."""
        if delegation is None or not self._open.known(session_id):
            return None
        self._trust(conn)  # forgets them when another connection wrote
        if not self._open.known(session_id):
            return None
        return self._open.take(session_id, delegation, call_id)

    def _same_content(
        self,
        conn: sqlite3.Connection,
        session_id: str,
        ref: PendingMessage | int | None,
        content: object,
    ) -> int | None:
        """The seq of the message `ref` names when it holds `content`, else None: a pending
        message by what it was stored with, a seq by what this batch wrote or what is stored."""
        if ref is None:
            return None
        if type(ref) is PendingMessage:
            return ref.seq if ref.seq is not None and ref.content == content else None
        assert isinstance(ref, int)
        known_here, written = self._written_content(session_id, ref)
        if known_here:
            return ref if written == content else None
        return ref if message_content(conn, session_id, ref) == content else None
