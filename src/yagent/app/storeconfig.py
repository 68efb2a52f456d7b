"""`[store]`: where yagent keeps its durable state.

Contract: `url = ""` (the default) keeps everything in SQLite files in the yagent home, exactly as
before. `url = "postgresql://…"` (or the environment's `YAGENT_STORE_URL`, which wins over the
files) puts the durable run state — side effects, checkpoints, the commit gate, the run index
and the session leases — in that PostgreSQL database (`app.pgstate`). Any other scheme is a
configuration error, never a silent fallback to SQLite. The URL is checked here for its shape
only; reaching the database is `app.pgstate`'s job, at start. `app.sessionstore.open_sessions`
opens the session store the same switch chooses. This module is the `[store]` table alone (it
imports no store), so reading the configuration does not load the session store.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, field_validator

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
