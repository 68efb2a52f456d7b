"""Durable run state on PostgreSQL: what `[store] url = "postgresql://…"` switches on.

Contract:
- `attach(url, error)` opens ONE pool to the database and, on it, the side-effect store, the
  checkpoint store, the commit gate, the task board (`kernel.*.postgres`), the run index and the
  session leases (the same `app.durable` / `app.lease` code as the SQLite files, on
  `kernel.durable.pgdb`). Every schema is brought to its version at start, under an advisory lock,
  in one transaction per component.
- Any worker on any machine with the same URL sees the same runs: it can resume a run another
  one started, its side effects are judged at most once against the same keys, and leases and
  fences are judged by the database server's clock.
- A database that cannot be reached, refuses the connection, or holds a schema newer than this
  yagent knows is a `ConfigError` naming `[store] url` and where it points (never the password):
  the CLI says it in one line and exits 2, before any run starts.
The session store on the same database is `memory.pgstore`, opened by `app.sessionstore`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from yagent.app.config import ConfigError
from yagent.app.lease import LeaseError, SessionLeases
from yagent.app.stopkind import concluding_statuses
from yagent.kernel.durable import checkpoint, commitgate, pgdb, sideeffect
from yagent.kernel.durable.checkpoint.postgres import PgStore as PgCheckpoints
from yagent.kernel.durable.commitgate.postgres import PgGate
from yagent.kernel.durable.sideeffect.postgres import PgStore as PgEffects
from yagent.kernel.durable.taskboard.postgres import PgBoard

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


@dataclass(frozen=True, slots=True)
class Parts:
    """The durable stores on one pool; `closers` close them, the pool last."""

    where: str  # the database, without its password
    effects: sideeffect.Store
    checkpoints: checkpoint.StoreCAS
    gate: commitgate.Gate
    runs: pgdb.Database
    leases: SessionLeases
    board: PgBoard
    closers: list[Callable[[], None]]


def attach(url: str, error: type[Exception]) -> Parts:
    """Open the durable stores on the database at `url` (see the contract); `error` is the
    durable layer's own error type, which the run index raises and an opening failure may be."""
    closers: list[Callable[[], None]] = []
    try:
        pool = pgdb.Pool(url)
        closers.append(pool.close)
        effects = PgEffects(pool)
        checkpoints = PgCheckpoints(pool)
        gate = PgGate(pool, concluding_statuses())
        board = PgBoard(pool)
        runs = pgdb.Database(pool, prefix="runs", migrations=RUNS, error=error)
        leases = pgdb.Database(pool, prefix="lease", migrations=LEASES, error=LeaseError)
    except (*_OPEN_ERRORS, error) as exc:
        for close in reversed(closers):
            close()
        raise ConfigError(f"[store] url: {exc}") from None
    return Parts(
        where=pool.where,
        effects=effects,
        checkpoints=checkpoints,
        gate=gate,
        runs=runs,
        leases=SessionLeases(pool.where, db=leases),
        board=board,
        # the stores share the pool: each forgets it, then the pool itself closes, last
        closers=[effects.close, checkpoints.close, gate.close, board.close, pool.close],
    )
