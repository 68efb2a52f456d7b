"""The open tool calls of a session, as this connection knows them: a result goes to its call's row.

A result is matched to the earliest call with its `call_id` and delegation that has none yet
(`memory.pending`, the one rule). Asked of SQLite, that rule is a statement with a list
subquery, a sort and a `RETURNING` — the dearest statement of a tool step, and dearer still in the
app, where the rest of a step leaves the CPU's caches cold. A writer that knows the session's open
calls answers the same rule from memory and updates the call's row by its key instead.

Contract:
- A session's open calls are known from `load` (every call of the session without a result, read
  once in the transaction that first takes a tool call seq for it) plus the calls this connection
  records after it (`add`); `take` gives the earliest open call of a call id and delegation and
  forgets it, `closed` forgets a call the SQL rule answered. Nothing else writes a result.
- It is trusted exactly as long as the remembered seqs (`memory.base`): `clear` runs whenever
  another connection committed to the file (`PRAGMA data_version` moved) and whenever a
  transaction or savepoint is undone, and the session is read again at its next call.
- A session it does not know, and a result for any delegation (`delegation_id=None`), go through
  the SQL rule; so does a call id with no open call (the latest call is overwritten).
Leaves to the caller: checking that nobody else wrote before `take` (`StoreBase._trust`).
"""

from __future__ import annotations

import sqlite3

# (delegation, call id) -> the seqs of its open calls, earliest first
Calls = dict[tuple[str, str], list[int]]


class OpenCalls:
    """What one connection knows of its sessions' open calls (see the module contract)."""

    def __init__(self) -> None:
        self._sessions: dict[str, Calls] = {}

    def clear(self) -> None:
        self._sessions.clear()

    def known(self, session_id: str) -> bool:
        return session_id in self._sessions

    def load(self, conn: sqlite3.Connection, session_id: str) -> None:
        """Read the session's open calls (inside the write transaction, before this one's calls
        are inserted)."""
        calls: Calls = {}
        rows = conn.execute(
            "SELECT seq, delegation_id, call_id FROM tool_calls "
            "WHERE session_id = ? AND ended_at IS NULL ORDER BY seq",
            (session_id,),
        )
        for seq, delegation, call_id in rows:
            calls.setdefault((delegation, call_id), []).append(seq)
        self._sessions[session_id] = calls

    def add(self, session_id: str, delegation: str, call_id: str, seq: int) -> None:
        calls = self._sessions.get(session_id)
        if calls is not None:
            calls.setdefault((delegation, call_id), []).append(seq)

    def take(self, session_id: str, delegation: str, call_id: str) -> int | None:
        """The earliest open call's seq, now answered; None when the session has none open."""
        calls = self._sessions[session_id]
        seqs = calls.get((delegation, call_id))
        if not seqs:
            return None
        seq = seqs.pop(0)
        if not seqs:
            del calls[(delegation, call_id)]
        return seq

    def closed(self, session_id: str, call_id: str, seq: int) -> None:
        """The SQL rule answered call `seq` (in whichever delegation): it is open no more."""
        calls = self._sessions.get(session_id)
        if calls is None:
            return
        for key in [key for key in calls if key[1] == call_id]:
            seqs = calls[key]
            if seq in seqs:
                seqs.remove(seq)
                if not seqs:
                    del calls[key]
