"""Assembly: one run's parts wired together — the only place that knows all of them.

`open_app()` builds, for a workspace: settings and the workspace guard (with the YOLO mode), the
dispatcher and authorization loop, MCP servers (connected for the app's lifetime), hooks, the
Surface per agent, the Adapter, the session store, and the engine — the long-lived services; a
session's own state is not the app's: `App.sessions` (`app.opensession`) keeps one
`OpenSession` per session a run holds, and a bounded few idle ones (`IDLE_LIMIT`).
`App.run()` (`app.turn`) runs one task with one agent — each run module sees the app as its
own bundle of `app.services` (`TurnServices`…), which `App` satisfies and hands over, and the
session as its `OpenSession` — and records everything in the session:
messages, the event rollout, tool calls and results, usage and cost — through the session's
`app.steplog.StepLog`: a step's records are written in one transaction at each of its commit
points (before a tool runs, at the step's end), any other event at once, always in publish
order; each event is shown (dispatcher) as it is published. Streamed text is shown in segments
(`app.segments`), each screened once for the display as a whole, never a piece unscreened; it
is display-only (neither stored nor given to observers: the turn that ends it is).
Each run also gets the context economy (`app.contextconfig`: window, spill, offload, compaction
archive), the memories (`app.memories`) in its system prompt and the session references
(`app.sessionrefs`) in its task; a session continued in the same process keeps its compacted
context (`live`), one continued from the store starts from its full stored history.
Hooks (`app.hookrun`): each run gets its `pre_tool_use` ring and lifecycle events; the sessions
this process started get `session_end` when the app closes.
One process runs a session at a time: the app takes the session's lease (`app.lease`) before it
runs or resumes anything there and holds it until it closes; a second one is refused.
Durability (`app.durable`, `app.runtrack`, in `home/durable.db`): each run is checkpointed per
step and its conclusion committed once; side-effecting tool calls run through `sideeffect`; calls a
dead process left without a result are settled, never re-run; `resume=` continues an interrupted
run from its checkpoint (same history, its step count, its loaded tools).
A full disk under the home (`app.fulldisk`): every write of a run's record goes through `full`;
the first that finds the disk full seals the record and halts the run at its next step boundary.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import anyio

from yagent.agents import agentfiles, catalog, imported
from yagent.agents.catalog import AgentDef
from yagent.agents.pause import PauseGate
from yagent.agents.results import AgentResult
from yagent.app import (
    contextconfig,
    delegationpool,
    fanout,
    fanrun,
    gcpolicy,
    hookrun,
    projectfolders,
    safety,
    turn,
)
from yagent.app.config import Config, ConfigError
from yagent.app.durable import ResumeDecision, open_home
from yagent.app.engines import build_engine
from yagent.app.fulldisk import FullDisk
from yagent.app.lane import Lane
from yagent.app.lease import LeaseKeeper
from yagent.app.opensession import Observer, OpenSession, OpenSessions
from yagent.app.sessionstore import open_sessions
from yagent.app.telemetry import WARNING_EVENT, Telemetry, exporter_from_env
from yagent.app.trust import Status
from yagent.kernel.context import sessionref, spill
from yagent.kernel.judge import auditgate
from yagent.llm.pricing import DEFAULT_PRICES, Ledger, PriceTable
from yagent.llm.types import Engine
from yagent.memory import SessionStore
from yagent.messaging import Dispatcher
from yagent.tools import hooks
from yagent.tools.confirm import UserConfirm
from yagent.tools.guard import WorkspaceGuard
from yagent.tools.mcp.config import ServerConfig
from yagent.tools.mcp.connect import Servers, connect
from yagent.tools.settings import Settings
from yagent.tools.skills import FolderSkillSource
from yagent.tools.surface import Surface, SurfaceOptions
from yagent.tools.yolo import Yolo
from yagent.toolspec.builtin import BUILTIN
from yagent.toolspec.delegate import DELEGATE as DELEGATE_SPEC


class AgentChoiceError(ConfigError, catalog.AgentConfigError):
    """The agent asked for cannot run as configured (unknown, broken, or waiting for trust)."""


@dataclass
class App:
    config: Config
    home: Path
    workspace: Path
    yolo: Yolo
    store: SessionStore
    engine: Engine
    mcp: Servers
    dispatcher: Dispatcher = field(default_factory=Dispatcher)
    interactive: bool = True
    pause: PauseGate = field(default_factory=PauseGate)
    observers: list[Observer] = field(default_factory=list)
    prices: PriceTable = DEFAULT_PRICES
    pruned: spill.Cleanup = field(default_factory=lambda: spill.Cleanup(0, 0, ()))
    start: Path | None = None  # where the person started, when below the workspace root
    max_turns: int | None = None  # `--max-turns`: no agent of this app takes more model calls

    def __post_init__(self) -> None:
        audit = self.config.audit
        self.audit = auditgate.AuditGate(
            auditgate.Thresholds(audit.prompt_at, audit.deny_at, audit.review_mutating)
        )
        self.otel_sink = exporter_from_env()  # None unless OTEL_* variables ask for export
        self.ledger = Ledger(self.prices)
        self.settings = Settings(self.home)
        reads = safety.read_mask(self.config, self.workspace)
        self.guard = WorkspaceGuard(
            self.workspace, settings=self.settings, yolo=self.yolo, reads=reads
        )
        self.confirm = UserConfirm(self.dispatcher) if self.interactive else None
        status = self.config.project.status
        self.skills = FolderSkillSource.for_workspace(
            self.workspace,
            self.home,
            Path.home(),
            trust={f: status[f].value for f in projectfolders.SKILL_FOLDERS if f in status},
        )
        self.guard.add_read_roots(self.skills.folders())  # skill files, read-only, anywhere
        entries = [e.model_dump(exclude_none=True) for e in self.config.hooks]
        self.hook_engine, _ = hooks.from_config(entries, cwd=self.workspace)
        self.hooks = hookrun.AppHooks(
            self.hook_engine, workspace=self.workspace, home=self.home, store=self.store
        )
        self.safety = safety.build(self.config, self.workspace)
        self.openings = safety.session_openings(
            self.safety.local_net, self.settings, self.workspace
        )
        found = agentfiles.find(self.workspace, Path.home())  # .claude/agents: delegatable too
        self.topology = delegationpool.topology(self.config, found)  # a cycle: exit 2
        self.durable = open_home(self.home, self.config)  # closed by open_app
        self.board = self.durable.board  # delegations' tasks, beside the runs (closed with them)
        self.leases = LeaseKeeper(self.durable.leases, self._lease_lost)  # one runner a session
        self.clock: sessionref.Clock = sessionref.SystemClock()
        self.full = FullDisk(lambda reason: self.pause.halt(reason))  # seals the run's record
        self.sessions = OpenSessions(self)  # each session's own state (`app.opensession`)

    async def end_jobs(self) -> str | None:
        """End the session's background jobs (or keep them, `[sandbox] keep_background`); the
        notice naming them, None when there were none."""
        session = self.safety.commands.session
        return None if session is None else await session.close()

    # -- per agent ----------------------------------------------------------------------------
    def agent(self, name: str) -> AgentDef:
        """`[agents.X]` first, then the built-in agents, then Claude Code's agent files — the
        project's only once the person trusted its `.claude/agents` (`app.projectfolders`).
        A refusal is an `AgentChoiceError`: a configuration error (exit 2, one line).
        With `max_turns`, the agent's step limit is at most that. An agent that has the `delegate`
        tool and may delegate gets the roster of those it may call at the end of its prompt."""
        try:
            agent = self._agent(name)
        except catalog.AgentConfigError as exc:
            raise AgentChoiceError(str(exc)) from None
        may_delegate = agent.profile.grants(DELEGATE_SPEC)  # the roster is for the tool's user
        callees = (
            delegationpool.roster(self.topology, agent.name, self._agent) if may_delegate else ""
        )
        if callees:
            agent = replace(agent, prompt=agent.prompt + callees)
        if self.max_turns is not None and agent.max_steps > self.max_turns:
            return replace(agent, max_steps=self.max_turns)
        return agent

    def _agent(self, name: str) -> AgentDef:
        retries = self.config.llm.step_retries
        custom = self.config.agents.get(name)
        if custom is not None and not catalog.topology_only(name, custom.model_dump()):
            return catalog.custom_agent(name, custom.model_dump(), retries)
        files = agentfiles.find(self.workspace, Path.home())
        entry = files.get(name)
        if name in catalog.BUILTIN_AGENTS or entry is None:
            try:
                return catalog.builtin(name, retries)
            except catalog.AgentConfigError as exc:
                raise catalog.AgentConfigError(
                    f"{exc}; yours: {', '.join(sorted(self.config.agents)) or 'none'}; "
                    f"from .claude/agents: {agentfiles.names(files.values())}"
                ) from None
        status = self.config.project.status.get(projectfolders.AGENTS)
        if entry.project and status is not Status.TRUSTED:
            why = status.value if status is not None else Status.UNTRUSTED.value
            raise catalog.AgentConfigError(
                f"agent {name!r} comes from {entry.path}, and the project's .claude/agents is "
                f"{why}: review it with `yagent trust` (a repository's agent chooses its own "
                "tools and model)"
            )
        return imported.load(entry, retries)

    def surface(
        self,
        agent: AgentDef,
        lane: Lane | None = None,
        run_hooks: hookrun.RunHooks | None = None,
    ) -> Surface:
        """The agent's tools and judgement ring; `run_hooks`: the run's `pre_tool_use` ring."""
        stage = run_hooks.stage() if run_hooks is not None else None
        options = SurfaceOptions(
            deferred=self.config.agent.deferred_tools,
            schema_budget=self.config.agent.schema_budget,
            yolo=self.yolo,
            host_stages=(stage,) if stage is not None else (),
            commands=lane.commands if lane else self.safety.commands,
            audit=self.audit,
            confine=lane.declaration if lane else None,
            openings=self.openings,
        )
        return Surface(BUILTIN, agent.profile, self.guard, external=self.mcp.specs, options=options)

    # -- sessions -----------------------------------------------------------------------------
    def _lease_lost(self, session_id: str) -> None:
        """Another process took the session over (this one was frozen past the lease): the run
        stops at its next step boundary (`turn` says why). Called from the renewing thread."""
        self.pause.abandon()

    @contextlib.contextmanager
    def observed(self, session: OpenSession) -> Iterator[None]:
        """One turn's telemetry: it sees every event published until the turn is over."""
        record = session.recorder()
        telemetry = Telemetry(
            session.id,
            sink=self.otel_sink,
            prices=self.prices,
            on_warning=lambda f: record.rollout(WARNING_EVENT, f.to_dict()),
            rows=self.otel_sink is not None,  # rows only for an exporter: nothing else reads them
        )
        self.observers.append(telemetry.observe_event)
        try:
            yield
        finally:
            self.observers.remove(telemetry.observe_event)
            telemetry.close()

    async def run_parallel(self, work: fanrun.Work, **options: Any) -> fanout.ParallelRun:
        """Confined sub-agents at once, in one new session (`app.fanout`, `app.fanrun`)."""
        return await fanrun.run_parallel(self, work, **options)

    def new_session(self, task: str, agent_name: str | None = None) -> str:
        """A new session for `task`, created before its first turn runs: a host that holds the
        id keeps the conversation even when that turn is stopped before it ends."""
        agent = self.agent(agent_name or self.config.agent.default)
        return turn.new_session(self, task, agent.name, agent.model)

    async def run(
        self,
        task: str,
        *,
        agent_name: str | None = None,
        session_id: str | None = None,
        resume: ResumeDecision | None = None,
        lane: Lane | None = None,
    ) -> tuple[str, AgentResult]:
        """Run `task`; a new session unless `session_id` continues one (its messages as history);
        `resume` (a CONTINUE decision for that session) continues its interrupted run instead;
        `lane`: one confined task of a parallel run in that session (fresh history, `fanout`)."""
        return await turn.run_task(
            self, task, agent_name=agent_name, session_id=session_id, resume=resume, lane=lane
        )


@contextlib.asynccontextmanager
async def open_app(
    config: Config,
    *,
    home: Path,
    workspace: Path,
    yolo: Yolo = Yolo.OFF,
    interactive: bool = True,
    engine: Engine | None = None,
    start: Path | None = None,
) -> AsyncIterator[App]:
    store = open_sessions(home, config.store.url)
    servers = tuple(
        ServerConfig.from_mapping(name, server.model_dump(exclude_none=True))
        for name, server in sorted(config.mcp.items())
    )
    prices = PriceTable.from_config(
        {k: v.model_dump() for k, v in config.llm.prices.items()}, base=DEFAULT_PRICES
    )
    try:
        async with connect(servers, workspace=workspace, auth_dir=home / "mcp-auth") as mcp:
            app = App(
                config,
                home,
                workspace,
                yolo,
                store,
                engine or await build_engine(config.llm, home=home),
                mcp,
                interactive=interactive,
                prices=prices,
                start=start,
            )
            app.pruned = await anyio.to_thread.run_sync(
                contextconfig.prune_spills, home / "state", config.agent.spill_max_age_days
            )
            try:
                async with contextlib.AsyncExitStack() as stack:
                    if app.safety.egress_proxy is not None:  # sandboxed egress, app-long
                        await stack.enter_async_context(app.safety.egress_proxy)
                    gcpolicy.opened()  # the app is open: start-up's objects may be frozen
                    yield app
            finally:
                if (session := app.safety.commands.session) is not None:
                    session.close_now()  # a host that did not end_jobs: nothing outlives the app
                with anyio.CancelScope(shield=True):
                    try:
                        await app.hooks.end_sessions()  # session_end while the leases are held
                    finally:
                        await app.leases.close()
                app.durable.close()
                if app.otel_sink is not None:
                    app.otel_sink.shutdown()
    finally:
        store.close()
