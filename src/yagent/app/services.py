"""The session layer's view of the app: what each run module reads of it, and nothing more.

Contract:
- One bundle (a `Protocol`) per run module, naming only the members that module reads or hands
  on to the run module it calls: `LaneServices` (`app.lanerun`, a confined sub-run: `run`),
  `PlanServices` (`app.fanout`, a parallel plan checked), `ResumeServices`
  (`app.delegationresume`, the delegations a dead process left), `DelegationServices`
  (`app.delegation`, the Director's delegations, each run as a lane), `ParallelServices`
  (`app.fanrun`, a parallel plan run) and `TurnServices` (`app.turn`, one agent run, which hands
  its services on to its delegations). A bundle that hands services on has the callee's bundle
  as a base, so mypy judges every hand-on; `tests/test_gate_run_services.py` fails when a run
  module reads a member its bundle does not declare, takes two bundles, or reads its services
  by reflection.
- The run modules take their bundle (their parameter is `services`) and the session they run in
  as its `app.opensession.OpenSession`, and never import `app.assemble`, not even for a type:
  the module graph runs one way, `assemble → run modules → services → opensession`, with no loop
  (`kernel.archcheck`'s `import-loop` rule; `docs/architecture.md`).
- `App` (`app.assemble`) satisfies every bundle structurally and hands itself over; any other
  host can hand anything that has a bundle's members (a test double, a narrower object).
- Long-lived services are read, never reassigned, by a run: the configuration and the paths, the
  stores (`store`, `durable`, `board`, `leases`), the engine, MCP servers, the guard and the
  safety settings, hooks, the pause gate, the full-disk seal. No per-session state is here: a
  run holds its session from `sessions` (`app.opensession`: its record, band marker and live
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


class LaneServices(Protocol):
    """`app.lanerun`: a confined sub-run goes through the app's one entry point."""

    @property
    def run(self) -> RunTask: ...


class PlanServices(Protocol):
    """`app.fanout`: a parallel plan checked against the agents and the sandbox."""

    config: Config
    workspace: Path
    safety: Safety

    def agent(self, name: str) -> AgentDef: ...

    def surface(
        self, agent: AgentDef, lane: Lane | None = None, run_hooks: RunHooks | None = None
    ) -> Surface: ...


class ResumeServices(Protocol):
    """`app.delegationresume`: a delegation a dead process left, answered from the stores."""

    store: SessionStore
    durable: Durable
    board: taskboard.RowBoard


class DelegationServices(LaneServices, Protocol):
    """`app.delegation`: the Director's delegations, on the board, each run as a lane."""

    config: Config
    home: Path
    workspace: Path
    store: SessionStore
    board: taskboard.RowBoard
    safety: Safety
    topology: dispatch.Guard

    def agent(self, name: str) -> AgentDef: ...


class ParallelServices(PlanServices, LaneServices, Protocol):
    """`app.fanrun`: a parallel plan run in one new session, its tasks as lanes."""

    store: SessionStore
    durable: Durable
    engine: Engine
    sessions: OpenSessions

    def observed(self, session: OpenSession) -> AbstractContextManager[None]: ...


class TurnServices(DelegationServices, ResumeServices, Protocol):
    """`app.turn`: one agent run — what it reads itself, and what its delegations and the
    delegations a dead process left need (handed on to `app.delegation` and
    `app.delegationresume`)."""

    # configuration and places
    config: Config
    home: Path
    workspace: Path
    start: Path | None  # where the person started, when below the workspace root
    yolo: Yolo
    # stores
    store: SessionStore
    durable: Durable
    leases: LeaseKeeper
    # model and tools
    engine: Engine
    mcp: Servers
    guard: WorkspaceGuard
    confirm: UserConfirm | None
    skills: FolderSkillSource
    safety: Safety
    openings: Openings
    hooks: AppHooks
    hook_engine: hookengine.Engine
    # run control, and the sessions this process runs
    pause: PauseGate
    full: FullDisk
    clock: sessionref.Clock
    sessions: OpenSessions

    def surface(
        self, agent: AgentDef, lane: Lane | None = None, run_hooks: RunHooks | None = None
    ) -> Surface: ...

    def observed(self, session: OpenSession) -> AbstractContextManager[None]: ...
