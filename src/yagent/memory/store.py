"""`SessionStore`: the one object the agent loop and the command line use, and `default_path`.

It is the sum of its parts (sessions, conversation log, ledger) on one connection; `export_session`
reads every record kind of a session in one snapshot, as plain JSON-ready data — what
`yagent sessions show` prints and what a replay recording is built from.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from yagent.memory.ledger import (
    LedgerPart,
    query_archive,
    query_checkpoints,
    query_usage,
    query_usage_records,
)
from yagent.memory.log import ConversationPart, query_events, query_messages, query_tool_calls
from yagent.memory.schema import latest_version
from yagent.memory.sessions import SessionsPart, load_session

EXPORT_FORMAT = "yagent.session"
DB_NAME = "sessions.db"


def default_path(home: Path | None = None) -> Path:
    """`<yagent home>/sessions.db`: `home` if given, else `$YAGENT_HOME`, else `~/.yagent`."""
    if home is None:
        configured = os.environ.get("YAGENT_HOME", "").strip()
        home = Path(configured).expanduser() if configured else Path.home() / ".yagent"
    return Path(home) / DB_NAME


class SessionStore(SessionsPart, ConversationPart, LedgerPart):
    """Sessions, messages, rollout, tool calls, usage, checkpoints and archive in one SQLite file.

    `SessionStore(path, clock=None, busy_timeout=5.0, durable=False)`: `durable=True` makes every
    commit survive a power cut (synchronous=FULL); the default survives a process crash.
    """

    def export_session(self, session_id: str) -> dict[str, Any]:
        """Everything recorded for the session, JSON-serialisable, from one read snapshot."""
        with self._read() as (conn, _):
            info = load_session(conn, session_id)
            return {
                "format": EXPORT_FORMAT,
                "schema_version": latest_version(),
                "session": info.to_dict(),
                "messages": query_messages(conn, session_id, None),
                "events": [e.to_dict() for e in query_events(conn, session_id)],
                "tool_calls": [c.to_dict() for c in query_tool_calls(conn, session_id, None)],
                "usage": {
                    "totals": query_usage(conn, session_id, None, None).to_dict(),
                    "records": [u.to_dict() for u in query_usage_records(conn, session_id)],
                },
                "checkpoints": [
                    c.to_dict() for c in query_checkpoints(conn, session_id, None, latest=False)
                ],
                "archive": [a.to_dict() for a in query_archive(conn, session_id, None)],
            }
