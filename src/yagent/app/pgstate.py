"""Durable run state on PostgreSQL: what `[store] url = "postgresql://…"` switches on.

Contract:
- `attach(durable, url)` opens ONE pool to the database and, on it, the side-effect store, the
  checkpoint store, the commit gate (`kernel.*.postgres`), the run index and the session leases
  (the same `app.durable` / `app.lease` code as the SQLite files, on `kernel.pgdb`). Every schema
  is brought to its version at start, under an advisory lock, in one transaction per component.
- Any worker on any machine with the same URL sees the same runs: it can resume a run another
  one started, its side effects are judged at most once against the same keys, and leases and
  fences are judged by the database server's clock.
- A database that cannot be reached, refuses the connection, or holds a schema newer than this
  yagent knows is a `ConfigError` naming `[store] url` and where it points (never the password):
  the CLI says it in one line and exits 2, before any run starts.
The session store on the same database is `memory.pgstore`, opened by `app.storeconfig`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from yagent.app.config import ConfigError
from yagent.app.lease import LeaseError, SessionLeases
from yagent.kernel import checkpoint, commitgate, pgdb, sideeffect
from yagent.kernel.checkpoint.postgres import PgStore as PgCheckpoints
from yagent.kernel.commitgate.postgres import PgGate
from yagent.kernel.sideeffect.postgres import PgStore as PgEffects

if TYPE_CHECKING:  # durable imports this module lazily, only when a URL is configured
    from yagent.app.durable import Durable

RUNS = (
    (
        """CREATE TABLE runs_runs (
            run_id TEXT PRIMARY KEY,
            session_id TEXT NOT NULL,
            delegation_id TEXT NOT NULL,
            turn INTEGER NOT NULL,
            agent TEXT NOT NULL,
            task TEXT NOT NULL,
            max_steps INTEGER NOT NULL,
            started_at DOUBLE PRECISION NOT NULL
        )""",
        "CREATE UNIQUE INDEX runs_runs_turn ON runs_runs (session_id, delegation_id, turn)",
    ),
)
LEASES = (
    (
        """CREATE TABLE lease_sessions (
            session_id TEXT PRIMARY KEY,
            token TEXT NOT NULL,
            pid INTEGER NOT NULL,
            started TEXT NOT NULL,
            host TEXT NOT NULL,
            expires_at DOUBLE PRECISION NOT NULL
        )""",
    ),
)
_OPEN_ERRORS = (
    pgdb.PgError,
    sideeffect.StoreError,
    checkpoint.StoreError,
    commitgate.StoreError,
    LeaseError,
)


def describe(url: str) -> str:
    return pgdb.describe(url)


def attach(durable: Durable, url: str) -> str:
    """Open `durable`'s stores on the database at `url`; returns where it is (see the contract)."""
    from yagent.app.durable import CONCLUDED, DurableError, RunIndex

    closers: list[Callable[[], None]] = []
    try:
        pool = pgdb.Pool(url)
        closers.append(pool.close)
        effects = PgEffects(pool)
        checkpoints = PgCheckpoints(pool)
        gate = PgGate(pool, CONCLUDED)
        runs = pgdb.Database(pool, prefix="runs", migrations=RUNS, error=DurableError)
        leases = pgdb.Database(pool, prefix="lease", migrations=LEASES, error=LeaseError)
    except (*_OPEN_ERRORS, DurableError) as exc:
        for close in reversed(closers):
            close()
        raise ConfigError(f"[store] url: {exc}") from None
    durable.effects, durable.checkpoints, durable.gate = effects, checkpoints, gate
    durable.runs = RunIndex(pool.where, db=runs)
    durable.leases = SessionLeases(pool.where, db=leases)
    # the stores share the pool: each forgets it, then the pool itself closes, last
    durable._closers = [effects.close, checkpoints.close, gate.close, pool.close]
    return pool.where
