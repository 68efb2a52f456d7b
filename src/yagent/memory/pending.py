"""The one write path of the conversation log and the ledger: records handed to the store.

Contract:
- `write_records(session_id, records)` stores one session's events, messages, usage records,
  tool calls, tool results, checkpoints and archive records in ONE write transaction, in the
  order given: each kind's seqs follow the list's order (a rollout written this way keeps publish
  order). It returns each record's seq (for a result, its call's). Every record is checked
  (`memory.recordchecks`: JSON objects, text, numbers) before the transaction opens: a refused
  record raises `TypeError` / `ValueError` and nothing is written. Inside the transaction, a
  result whose call is not on record raises `ToolCallNotFoundError` and nothing of it is written.
- The per-record methods (`append_event`, `append_message`, `add_usage`, `record_tool_call`,
  `record_tool_result`, `write_checkpoint`, `archive`) are this path with one record each;
  inside `batch()` a call joins the batch as before.
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

import sqlite3
from collections.abc import Sequence
from typing import Any

from yagent.memory import codec
from yagent.memory.base import StoreBase
from yagent.memory.errors import ToolCallNotFoundError
from yagent.memory.recordchecks import (
    ARCHIVE,
    CALL,
    CHECKPOINT,
    CONTENT_REF,
    EVENT,
    MESSAGE,
    USAGE,
    Pending,
    PendingArchive,
    PendingCall,
    PendingCheckpoint,
    PendingEvent,
    PendingMessage,
    PendingResult,
    PendingUsage,
    check,
)

__all__ = [  # the records handed to the store are named here too (`memory.recordchecks`)
    "CONTENT_REF",
    "Pending",
    "PendingArchive",
    "PendingCall",
    "PendingCheckpoint",
    "PendingEvent",
    "PendingMessage",
    "PendingResult",
    "PendingUsage",
    "RecordsPart",
    "message_content",
]


def message_content(conn: sqlite3.Connection, session_id: str, seq: int) -> str | None:
    """The stored message's `content` when it is text, else None."""
    row = conn.execute(
        "SELECT body FROM messages WHERE session_id = ? AND seq = ?", (session_id, seq)
    ).fetchone()
    if row is None:
        return None
    content = codec.decode_object(row[0]).get("content")
    return content if isinstance(content, str) else None


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
    "checkpoints": "INSERT INTO checkpoints (session_id, seq, ts, delegation_id, step, data) "
    "VALUES (?, ?, ?, ?, ?, ?)",
    "archive": "INSERT INTO archive (session_id, seq, ts, kind, payload) VALUES (?, ?, ?, ?, ?)",
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
        checked = [check(record) for record in records]
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
            if tag == EVENT:
                _, kind, delegation, body, ref = item
                if ref is not None:
                    body = self._event_text(conn, session_id, body, ref)
                seq = next_seq(conn, "events", session_id)
                rows.setdefault("events", []).append((session_id, seq, now, kind, delegation, body))
            elif tag == MESSAGE:
                _, agent, delegation, body, content, record = item
                seq = next_seq(conn, "messages", session_id)
                rows.setdefault("messages", []).append(
                    (session_id, seq, now, agent, delegation, body)
                )
                self._remember(session_id, seq, content)
                record.seq, record.content = seq, content
                self._assigned.append(record)
            elif tag == USAGE:
                seq = next_seq(conn, "usage", session_id)
                rows.setdefault("usage", []).append((session_id, seq, now, *item[1:]))
            elif tag == CALL:
                seq = next_seq(conn, "tool_calls", session_id)
                rows.setdefault("tool_calls", []).append((session_id, seq, *item[1:]))
                self._open.add(session_id, item[4], item[1], seq)
            elif tag == CHECKPOINT:
                seq = next_seq(conn, "checkpoints", session_id)
                rows.setdefault("checkpoints", []).append((session_id, seq, now, *item[1:]))
            elif tag == ARCHIVE:
                seq = next_seq(conn, "archive", session_id)
                rows.setdefault("archive", []).append((session_id, seq, now, *item[1:]))
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
