"""The session store `[store] url` chooses (`app.storeconfig`): `open_sessions(home, url)` opens
`home/sessions.db`, or `memory.pgstore` on the database. `sessions_here` is the one for a command
that has no app, by the configuration in force in the current directory (the home's file, the
workspace's, the environment's `YAGENT_STORE_URL`) — so `yagent sessions`, `trace`, `replay` and
`reconcile` read the same sessions a run wrote, whether they are in the home or on PostgreSQL.
"""

from __future__ import annotations

from pathlib import Path

from yagent.app.config import load
from yagent.memory import DB_NAME, SessionStore, SessionStoreError


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


def sessions_here(home: Path) -> SessionStore:
    """Open it (a bad configuration: `ConfigError`; an unusable store: `SessionStoreError`)."""
    return open_sessions(home, load(home=home, workspace=Path.cwd().resolve()).store.url)
