"""The ledger: token usage and cost, checkpoints, the compaction archive and step facts.

Usage totals never turn an unknown cost into 0: a record added with `cost=None` makes the totals
`cost_complete=False` and is counted in `unpriced_calls`. Checkpoints are appended, never replaced;
the latest *written* one per (session, delegation) wins — the single writer/reader pair every
caller (loop and delegation resume alike) goes through. Step facts come from the rollout's
`sub_agent_activity` records only.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from typing import Any

from yagent.memory import codec
from yagent.memory.base import require
from yagent.memory.codec import text_arg
from yagent.memory.pending import PendingArchive, PendingCheckpoint, PendingUsage, RecordsPart
from yagent.memory.records import (
    SUB_AGENT_ACTIVITY,
    ArchiveRecord,
    Checkpoint,
    RolloutSummary,
    UsageRecord,
    UsageTotals,
)


def query_usage_records(conn: sqlite3.Connection, session_id: str) -> list[UsageRecord]:
    require(conn, session_id)
    rows = conn.execute(
        "SELECT seq, ts, model, delegation_id, input_tokens, output_tokens, cache_read_tokens, "
        "cache_write_tokens, cost FROM usage WHERE session_id = ? ORDER BY seq",
        (session_id,),
    )
    return [UsageRecord(*row) for row in rows]


def query_usage(
    conn: sqlite3.Connection, session_id: str, delegation_id: str | None, model: str | None
) -> UsageTotals:
    require(conn, session_id)
    where, params = "session_id = ?", [session_id]
    for column, value in (("delegation_id", delegation_id), ("model", model)):
        if value is not None:
            where += f" AND {column} = ?"
            params.append(value)
    calls, inp, out, cache_read, cache_write, cost, priced = conn.execute(
        "SELECT COUNT(*), COALESCE(SUM(input_tokens), 0), COALESCE(SUM(output_tokens), 0), "
        "COALESCE(SUM(cache_read_tokens), 0), COALESCE(SUM(cache_write_tokens), 0), "
        f"SUM(cost), COUNT(cost) FROM usage WHERE {where}",
        params,
    ).fetchone()
    return UsageTotals(
        calls=calls,
        input_tokens=inp,
        output_tokens=out,
        cache_read_tokens=cache_read,
        cache_write_tokens=cache_write,
        cost=0.0 if calls == 0 else (None if priced == 0 else float(cost)),
        cost_complete=priced == calls,
        unpriced_calls=calls - priced,
    )


def query_checkpoints(
    conn: sqlite3.Connection, session_id: str, delegation_id: str | None, latest: bool
) -> list[Checkpoint]:
    require(conn, session_id)
    extra = "" if delegation_id is None else " AND delegation_id = ?"
    params = (session_id,) if delegation_id is None else (session_id, delegation_id)
    order = "DESC LIMIT 1" if latest else "ASC"
    rows = conn.execute(
        "SELECT seq, ts, delegation_id, step, data FROM checkpoints "
        f"WHERE session_id = ?{extra} ORDER BY seq {order}",
        params,
    )
    return [
        Checkpoint(seq, ts, d, step, codec.decode_object(data)) for seq, ts, d, step, data in rows
    ]


def query_archive(
    conn: sqlite3.Connection, session_id: str, kind: str | None
) -> list[ArchiveRecord]:
    require(conn, session_id)
    extra, params = ("", (session_id,)) if kind is None else (" AND kind = ?", (session_id, kind))
    rows = conn.execute(
        f"SELECT seq, ts, kind, payload FROM archive WHERE session_id = ?{extra} ORDER BY seq",
        params,
    )
    return [ArchiveRecord(seq, ts, k, codec.decode_object(payload)) for seq, ts, k, payload in rows]


class LedgerPart(RecordsPart):
    def add_usage(
        self,
        session_id: str,
        *,
        model: str,
        input_tokens: int,
        output_tokens: int,
        cache_read_tokens: int = 0,
        cache_write_tokens: int = 0,
        cost: float | None,
        delegation_id: str = "",
    ) -> int:
        """Record one model call's usage; `cost=None` means unknown (never read as 0). Its seq."""
        record = PendingUsage(
            model=model,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            cache_read_tokens=cache_read_tokens,
            cache_write_tokens=cache_write_tokens,
            cost=cost,
            delegation_id=delegation_id,
        )
        return self.write_records(session_id, (record,))[0]

    def usage(
        self, session_id: str, *, delegation_id: str | None = None, model: str | None = None
    ) -> UsageTotals:
        """Totals over the session's usage records (optionally one delegation / one model)."""
        with self._read() as (conn, _):
            return query_usage(conn, session_id, delegation_id, model)

    def write_checkpoint(
        self, session_id: str, *, delegation_id: str = "", step: int, data: Mapping[str, Any]
    ) -> int:
        """Append a checkpoint for the run `delegation_id` stopped at `step`; its seq."""
        record = PendingCheckpoint(step=step, data=data, delegation_id=delegation_id)
        return self.write_records(session_id, (record,))[0]

    def latest_checkpoint(self, session_id: str, *, delegation_id: str = "") -> Checkpoint | None:
        """The last checkpoint written for this run, or None."""
        with self._read() as (conn, _):
            found = query_checkpoints(
                conn, session_id, text_arg(delegation_id, "delegation_id"), latest=True
            )
        return found[0] if found else None

    def archive(self, session_id: str, *, kind: str, payload: Mapping[str, Any]) -> int:
        """Keep something compaction removed from the live context (e.g. old messages); its seq."""
        return self.write_records(session_id, (PendingArchive(kind=kind, payload=payload),))[0]

    def archived(self, session_id: str, kind: str | None = None) -> list[ArchiveRecord]:
        with self._read() as (conn, _):
            return query_archive(conn, session_id, kind)

    def rollout_summary(self, session_id: str, *, delegation_id: str = "") -> RolloutSummary:
        """Step facts of one run (`delegation_id` "" = the top-level run)."""
        with self._read() as (conn, _):
            require(conn, session_id)
            steps = conn.execute(
                "SELECT COUNT(*) FROM events WHERE session_id = ? AND delegation_id = ? "
                "AND type = ?",
                (session_id, delegation_id, SUB_AGENT_ACTIVITY),
            ).fetchone()[0]
            rows = conn.execute(  # a packed body (`codec.pack`) is not SQL-readable JSON
                "SELECT body FROM messages WHERE session_id = ? AND delegation_id = ?",
                (session_id, delegation_id),
            )
            turns = sum(codec.decode_object(b).get("role") == "assistant" for (b,) in rows)
        return RolloutSummary(effective_steps=steps, assistant_turns=turns)
