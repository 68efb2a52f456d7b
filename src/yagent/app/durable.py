"""Durable runs: `home/durable.db` and the resume decision `yagent resume` acts on.

One SQLite file next to the sessions holds the side-effect store, the checkpoint store, the commit
gate, the run index and the session leases (`app.lease`) — each in its own tables, all through
`kernel.durable.sqlitedb`'s rules (WAL, `BEGIN IMMEDIATE`, synchronous FULL — NORMAL for the
per-step checkpoints, like the session store whose steps they describe), so several yagent processes
share it safely on one machine.

Contract:
- Every turn (a task given to an agent in a session) is a run with the id
  `<session>:<delegation or agent>:<turn>`, indexed here with its agent, task and step plan
  (steps "1".."max_steps", strict prefix: a step is trusted only after every earlier one).
- `decide(session)` is pure over what is stored: the latest run's snapshot goes through
  `checkpoint.decide`, and the commit gate says whether the run's end was committed.
  · its end committed, or a TERMINAL snapshot ⇒ NEW_TURN: a concluded run is never reopened
    automatically; resuming the session starts a new turn in it;
  · CONTINUE (the run was interrupted: error, cancel, pause, timeout, or the process died) ⇒
    CONTINUE at the step count recorded, with the surface's loaded tools restored;
  · no snapshot (it died before its first step was saved) ⇒ CONTINUE at step 0;
  · MISMATCH (the record does not fit the run's plan), or no run on record ⇒ NEW_TURN, saying why.
- The commit gate's terminal vocabulary is the loop statuses that conclude a run (finished,
  answered, max_steps). The others interrupt it and leave it resumable: committing them would make
  the very resume the issue asks for impossible.
Leaves to `runtrack`: writing the snapshots and the end commit while a run goes.
"""

from __future__ import annotations

import enum
import json
import os
import sqlite3
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from yagent.app.config import Config, ConfigError
from yagent.app.lease import SessionLeases, Tables
from yagent.app.stopkind import concluding_statuses
from yagent.kernel.durable import checkpoint, commitgate, sideeffect, sqlitefile, taskboard
from yagent.kernel.durable.sqlitedb import Database, DatabaseStore
from yagent.tools.effectrun import EffectRunner
from yagent.tools.effects import EffectRuleError, EffectTable
from yagent.tools.invocation import Publish

DB_NAME = "durable.db"
END_STEP = "end"  # the commit gate's step for a run's conclusion
CONCLUDED = concluding_statuses()  # one classifier: `app.stopkind.stop_kind`

_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS runs_runs (
        run_id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL,
        delegation_id TEXT NOT NULL,
        turn INTEGER NOT NULL,
        agent TEXT NOT NULL,
        task TEXT NOT NULL,
        max_steps INTEGER NOT NULL,
        started_at REAL NOT NULL
    )""",
    "CREATE UNIQUE INDEX IF NOT EXISTS runs_runs_turn"
    " ON runs_runs (session_id, delegation_id, turn)",
)
_COLUMNS = "run_id, session_id, delegation_id, turn, agent, task, max_steps, started_at"


class DurableError(Exception):
    """The run index could not be read or written; nothing is known to have changed."""


@dataclass(frozen=True, slots=True)
class RunRow:
    run_id: str
    session_id: str
    delegation_id: str
    turn: int
    agent: str
    task: str
    max_steps: int
    started_at: float

    def plan(self) -> tuple[checkpoint.StepDef, ...]:
        return tuple(checkpoint.StepDef(str(i)) for i in range(1, self.max_steps + 1))


class RunIndex(DatabaseStore):
    """The runs of every session, numbered per session and delegation."""

    _db: Tables  # type: ignore[assignment]

    def __init__(self, path: str | os.PathLike[str], *, db: Tables | None = None) -> None:
        self._db = db or Database(
            path, prefix="runs", version=1, schema=_SCHEMA, error=DurableError
        )

    async def new_run(
        self, session_id: str, delegation_id: str, agent: str, task: str, max_steps: int
    ) -> RunRow:
        def op(conn: sqlite3.Connection) -> RunRow:
            row = conn.execute(
                "SELECT COALESCE(MAX(turn), 0) FROM runs_runs"
                " WHERE session_id = ? AND delegation_id = ?",
                (session_id, delegation_id),
            ).fetchone()
            turn = int(row[0]) + 1
            run = RunRow(
                f"{session_id}:{delegation_id or agent}:{turn}",
                session_id,
                delegation_id,
                turn,
                agent,
                task,
                max_steps,
                time.time(),
            )
            conn.execute(
                f"INSERT INTO runs_runs ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    run.run_id,
                    session_id,
                    delegation_id,
                    turn,
                    agent,
                    task,
                    max_steps,
                    run.started_at,
                ),
            )
            return run

        return await self._db.transact(op, write=True)

    async def latest(self, session_id: str, delegation_id: str = "") -> RunRow | None:
        def op(conn: sqlite3.Connection) -> RunRow | None:
            row = conn.execute(
                f"SELECT {_COLUMNS} FROM runs_runs WHERE session_id = ? AND delegation_id = ?"
                " ORDER BY turn DESC LIMIT 1",
                (session_id, delegation_id),
            ).fetchone()
            return None if row is None else RunRow(*row)

        return await self._db.transact(op, write=False)


class Action(enum.StrEnum):
    CONTINUE = "continue"  # continue the interrupted run from its checkpoint
    NEW_TURN = "new_turn"  # the session goes on with a new turn (a new run)


@dataclass(frozen=True, slots=True)
class ResumeDecision:
    """What `yagent resume` does with a session, and why."""

    action: Action
    session_id: str
    reason: str
    run: RunRow | None = None
    resume: checkpoint.Resume | None = None
    commit: commitgate.Commit | None = None
    start_step: int = 0
    status: str = ""  # how the run was interrupted; "" when the process died without saying
    materialized: Mapping[str, Any] = field(default_factory=dict)

    def describe(self) -> str:
        head = "continue the interrupted run" if self.action is Action.CONTINUE else "new turn"
        where = f" {self.run.run_id} ({self.run.agent})" if self.run is not None else ""
        return f"resume decision: {head}{where} — {self.reason}"


def _detail(snapshot: checkpoint.RunProgress | None) -> dict[str, Any]:
    """The run facts the last step record carries (status, loaded tools); {} when unreadable."""
    if snapshot is None or not snapshot.steps:
        return {}
    last = max(snapshot.steps, key=lambda s: int(s.id) if s.id.isdigit() else 0)
    try:
        data = json.loads(last.detail) if last.detail else {}
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def decide(
    session_id: str,
    run: RunRow | None,
    snapshot: checkpoint.RunProgress | None,
    commit: commitgate.Commit | None,
) -> ResumeDecision:
    """The resume decision from what is stored (pure; see the module contract)."""
    if run is None:
        why = "no run of this session is on record (it predates durable runs): a new turn starts"
        return ResumeDecision(Action.NEW_TURN, session_id, why)
    resume = checkpoint.decide(run.run_id, run.plan(), snapshot)
    if commit is not None:
        why = (
            f"the run concluded ({commit.state}, committed by {commit.holder}); a concluded run "
            "is never reopened: a new turn starts in the session"
        )
        return ResumeDecision(Action.NEW_TURN, session_id, why, run, resume, commit)
    if resume.action is not checkpoint.ResumeAction.CONTINUE and snapshot is not None:
        why = f"{resume.action.value}: {resume.reason}; not continued automatically: a new turn"
        return ResumeDecision(Action.NEW_TURN, session_id, why, run, resume)
    facts = _detail(snapshot)
    status = str(facts.get("status") or "")
    trusted, interrupted = len(resume.trusted), len(resume.interrupted)
    start = trusted if resume.distrusted else trusted + interrupted
    how = status or "the process stopped without saying (killed or crashed)"
    why = f"the run was interrupted ({how}) after {start} step(s); it continues at step {start + 1}"
    if interrupted:
        why += f"; step {', '.join(resume.interrupted)} was in flight: its calls are settled first"
    if resume.distrusted:
        why += f"; completions after a hole are not trusted: {', '.join(resume.distrusted)}"
    loaded = facts.get("materialized")
    return ResumeDecision(
        Action.CONTINUE,
        session_id,
        why,
        run,
        resume,
        None,
        start,
        status,
        loaded if isinstance(loaded, dict) else {},
    )


class Durable:
    """The durable stores of one yagent home: one SQLite file, or a PostgreSQL database when
    `url` is given (`app.pgstate`; `path` then names the database, never its password)."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        side_effects: Iterable[Mapping[str, Any]] = (),
        effect_lease: float = 30.0,
        url: str = "",
    ) -> None:
        self.path = os.fspath(path)
        self.table = EffectTable.build(side_effects)
        self.effect_lease = effect_lease
        self.effects: sideeffect.Store
        self.checkpoints: checkpoint.StoreCAS
        self.gate: commitgate.Gate
        self.board: taskboard.RowBoard  # the Director's delegations (`app.delegation`)
        self._closers: list[Callable[[], None]] = []
        if url:
            # Imported only when configured: psycopg is an optional extra (yagent[pg]).
            from yagent.app import pgstate

            parts = pgstate.attach(url, DurableError)
            self.path = parts.where  # names the database, never its password
            self.effects, self.checkpoints, self.gate = parts.effects, parts.checkpoints, parts.gate
            self.runs = RunIndex(parts.where, db=parts.runs)
            self.leases = parts.leases
            self.board = parts.board
            self._closers = parts.closers
            return
        sqlitefile.probe(self.path)  # an empty or damaged file is refused, never written over
        effects = sideeffect.SqliteStore(self.path)
        # A checkpoint records progress the session store (synchronous NORMAL) holds the content
        # of: like it, it survives a killed process without an fsync per step (power loss may
        # take the last steps of both). Side effects, the gate and leases stay FULL.
        checkpoints = checkpoint.SqliteStore(self.path, synchronous="NORMAL")
        gate = commitgate.SqliteGate(self.path, CONCLUDED)
        self.effects, self.checkpoints, self.gate = effects, checkpoints, gate
        self.runs = RunIndex(self.path)
        self.leases = SessionLeases(self.path)
        board = taskboard.SqliteBoard(self.path)
        self.board = board
        self._closers = [effects.close, checkpoints.close, gate.close, board.close]

    def close(self) -> None:
        for close in (*self._closers, self.runs.close, self.leases.close):
            close()

    async def decide(self, session_id: str, delegation_id: str = "") -> ResumeDecision:
        run = await self.runs.latest(session_id, delegation_id)
        if run is None:
            return decide(session_id, None, None, None)
        snapshot = await self.checkpoints.load(run.run_id)
        commit = await self.gate.committed(run.run_id, END_STEP)
        return decide(session_id, run, snapshot, commit)

    def runner(
        self,
        session_id: str,
        publish: Publish,
        *,
        stopping: Callable[[], bool],
        delegation_id: str = "",
        on_store_error: Callable[[BaseException], object] = lambda exc: None,
    ) -> EffectRunner:
        """The side-effect runner of one run's tool context (`on_store_error`: told when the
        side-effect store fails, so nothing ran)."""
        return EffectRunner(
            self.effects,
            self.table,
            session_id,
            delegation_id,
            publish,
            self.effect_lease,
            stopping,
            on_store_error=on_store_error,
        )


def open_home(home: Path, config: Config) -> Durable:
    """`home/durable.db` with the configured side-effect rules; a bad rule is a `ConfigError`."""
    home.mkdir(parents=True, exist_ok=True)
    try:
        return Durable(
            home / DB_NAME,
            side_effects=config.side_effects,
            effect_lease=config.agent.effect_lease,
            url=config.store.url,
        )
    except EffectRuleError as exc:
        where = ", ".join(config.sources) or "defaults"
        raise ConfigError(f"[[side_effects]] ({where}): {exc}") from None
