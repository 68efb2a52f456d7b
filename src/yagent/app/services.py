"""The session layer's view of the app: what a run reads of it, and nothing more.

Contract:
- `RunServices` is every member the run modules use — `app.turn` (one agent run), `app.lanerun`
  (a confined sub-run), `app.fanout` / `app.fanrun` (a parallel plan, checked and run),
  `app.delegation` / `app.delegationresume` (the Director's delegations). They take a
  `RunServices` (their parameter is `services`) and the session they run in as its
  `app.opensession.OpenSession`, and never import `app.assemble`, not even for a type: the
  module graph runs one way, `assemble → run modules → services → opensession`, with no loop
  (`kernel.archcheck`'s `import-loop` rule; `docs/architecture.md`).
- `App` (`app.assemble`) satisfies it structurally and hands itself over; any other host can
  hand anything that has these members (a test double, a narrower object).
- Long-lived services are read, never reassigned, by a run: the configuration and the paths, the
  stores (`store`, `durable`, `board`, `leases`), the engine, MCP servers, the guard and the
  safety settings, hooks, the pause gate, the full-disk seal. No per-session state is here: a
  run opens its session from `sessions` (`app.opensession`: its record, band marker and live
  context) and works on that.
- A run calls back for the parts that need the app's wiring: `agent` (an agent definition as
  configured), `surface` (its tools and judgement ring), `observed` (one turn's telemetry) and
  `run` (a child run — `App.run`, which is `turn.run_task` on these services): a `RunTask`, the
  one entry point a lane runs through.
Refused: nothing here builds or owns a service; construction stays in `app.assemble`.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from pathlib import Path
from typing import Protocol

from yagent.agents.catalog import AgentDef
from yagent.agents.pause import PauseGate
from yagent.agents.results import AgentResult
from yagent.app.config import Config
from yagent.app.durable import Durable, ResumeDecision
from yagent.app.fulldisk import FullDisk
from yagent.app.hookrun import AppHooks, RunHooks
from yagent.app.lane import Lane
from yagent.app.lease import LeaseKeeper
from yagent.app.opensession import OpenSession, OpenSessions
from yagent.app.safety import Safety
from yagent.kernel.context import sessionref
from yagent.kernel.durable import taskboard
from yagent.kernel.judge import dispatch, hookengine
from yagent.llm.types import Engine
from yagent.memory import SessionStore
from yagent.tools.confirm import UserConfirm
from yagent.tools.guard import WorkspaceGuard
from yagent.tools.localask import Openings
from yagent.tools.mcp.connect import Servers
from yagent.tools.skills import FolderSkillSource
from yagent.tools.surface import Surface
from yagent.tools.yolo import Yolo


class RunTask(Protocol):
    """One agent run of `task` (the contract of `App.run`): a new session unless `session_id`
    continues one; `resume` continues an interrupted run; `lane` confines it."""

    async def __call__(
        self,
        task: str,
        *,
        agent_name: str | None = None,
        session_id: str | None = None,
        resume: ResumeDecision | None = None,
        lane: Lane | None = None,
    ) -> tuple[str, AgentResult]: ...


class RunServices(Protocol):
    """What the run modules use of the app (module contract)."""

    # configuration and places
    config: Config
    home: Path
    workspace: Path
    start: Path | None  # where the person started, when below the workspace root
    yolo: Yolo
    # stores
    store: SessionStore
    durable: Durable
    board: taskboard.RowBoard
    leases: LeaseKeeper
    # model and tools
    engine: Engine
    mcp: Servers
    guard: WorkspaceGuard
    confirm: UserConfirm | None
    skills: FolderSkillSource
    safety: Safety
    openings: Openings
    topology: dispatch.Guard
    hooks: AppHooks
    hook_engine: hookengine.Engine
    # run control, and the sessions this process runs
    pause: PauseGate
    full: FullDisk
    clock: sessionref.Clock
    sessions: OpenSessions

    def agent(self, name: str) -> AgentDef: ...

    def surface(
        self, agent: AgentDef, lane: Lane | None = None, run_hooks: RunHooks | None = None
    ) -> Surface: ...

    def observed(self, session: OpenSession) -> AbstractContextManager[None]: ...

    @property
    def run(self) -> RunTask: ...
