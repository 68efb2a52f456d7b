"""`[store]`: where yagent keeps its durable state.

Contract: `url = ""` (the default) keeps everything in SQLite files in the yagent home, exactly as
before. `url = "postgresql://…"` (or the environment's `YAGENT_STORE_URL`, which wins over the
files) puts the durable run state — side effects, checkpoints, the commit gate, the run index
and the session leases — in that PostgreSQL database (`app.pgstate`). Any other scheme is a
configuration error, never a silent fallback to SQLite. The URL is checked here for its shape
only; reaching the database is `app.pgstate`'s job, at start. `open_sessions` opens the session
store the same switch chooses: `home/sessions.db`, or `memory.pgstore` on the database.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, field_validator

from yagent.memory import DB_NAME, SessionStore, SessionStoreError

ENV = "YAGENT_STORE_URL"


class StoreSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    url: str = ""

    @field_validator("url")
    @classmethod
    def _postgres_only(cls, value: str) -> str:
        if value and not value.startswith(("postgresql://", "postgres://")):
            raise ValueError(
                "must be empty (SQLite in the yagent home) or a postgresql:// URL, "
                f"got a {value.split(':', 1)[0]!r} URL"
            )
        return value


def open_sessions(home: Path, url: str) -> SessionStore:
    """The session store `[store] url` chooses (an unreachable database: `SessionStoreError`)."""
    if not url:
        return SessionStore(home / DB_NAME)
    # Imported only when configured: psycopg is an optional extra (yagent[pg]).
    from yagent.memory.pgstore import PgSessionStore

    try:
        return PgSessionStore(url)
    except SessionStoreError as exc:
        raise SessionStoreError(f"[store] url: {exc}") from None
