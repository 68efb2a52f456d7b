"""The session store for a command that has no app: the one `[store] url` chooses, by the
configuration in force in the current directory (the home's file, the workspace's, the
environment's `YAGENT_STORE_URL`) — so `yagent sessions`, `trace`, `replay` and `reconcile` read
the same sessions a run wrote, whether they are in the home or on PostgreSQL.
"""

from __future__ import annotations

from pathlib import Path

from yagent.app.config import load
from yagent.app.storeconfig import open_sessions
from yagent.memory import SessionStore


def sessions_here(home: Path) -> SessionStore:
    """Open it (a bad configuration: `ConfigError`; an unusable store: `SessionStoreError`)."""
    return open_sessions(home, load(home=home, workspace=Path.cwd().resolve()).store.url)
