"""Assembly: one run's parts wired together — the only place that knows all of them.

`open_app()` builds, for a workspace: settings and the workspace guard (with the YOLO mode), the
dispatcher and authorization loop, MCP servers (connected for the app's lifetime), hooks, the
Surface per agent, the Adapter, the session store, and the engine. `App.run()` (`app.turn`) runs
one task with one agent and records everything in the session: messages, the event rollout, tool
calls and results, usage and cost. Events are persisted at the publish point, then shown
(dispatcher).
Each run also gets the context economy (`app.economy`: window, spill, offload, compaction
archive), the memories (`app.memories`) in its system prompt and the session references
(`app.sessionrefs`) in its task; a session continued in the same process keeps its compacted
context (`live`), one continued from the store starts from its full stored history.
One process runs a session at a time: the app takes the session's lease (`app.lease`) before it
runs or resumes anything there and holds it until it closes; a second one is refused.
Durability (`app.durable`, `app.runtrack`, in `home/durable.db`): each run is checkpointed per
step and its conclusion committed once; side-effecting tool calls run through `sideeffect`; calls a
dead process left without a result are settled, never re-run; `resume=` continues an interrupted
run from its checkpoint (same history, its step count, its loaded tools).
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from yagent.agents import catalog
from yagent.agents.catalog import AgentDef
from yagent.agents.pause import PauseGate
from yagent.agents.results import AgentResult
from yagent.app import economy, fanout, fanrun, safety, turn
from yagent.app.config import Config
from yagent.app.durable import Decision, open_home
from yagent.app.engines import build_engine
from yagent.app.lease import LeaseKeeper
from yagent.app.telemetry import WARNING_EVENT, Telemetry, exporter_from_env
from yagent.kernel import hookengine, policy, sessionref, spill
from yagent.llm import Message
from yagent.llm.pricing import DEFAULT_PRICES, Ledger, PriceTable
from yagent.llm.types import AssistantTurn, Engine
from yagent.memory import SessionStore
from yagent.messaging import Dispatcher, Event
from yagent.tools import hooks
from yagent.tools.confirm import UserConfirm
from yagent.tools.guard import WorkspaceGuard, Yolo
from yagent.tools.mcp import McpTools, ServerConfig
from yagent.tools.settings import Settings
from yagent.tools.skills import FolderSkillSource
from yagent.tools.surface import Surface, SurfaceOptions
from yagent.toolspec import BUILTIN

Observer = Callable[[Event], None]


@dataclass
class App:
    config: Config
    home: Path
    workspace: Path
    yolo: Yolo
    store: SessionStore
    engine: Engine
    mcp: McpTools
    dispatcher: Dispatcher = field(default_factory=Dispatcher)
    interactive: bool = True
    pause: PauseGate = field(default_factory=PauseGate)
    observers: list[Observer] = field(default_factory=list)
    prices: PriceTable = DEFAULT_PRICES
    pruned: spill.Cleanup = field(default_factory=lambda: spill.Cleanup(0, 0, ()))

    def __post_init__(self) -> None:
        audit = self.config.audit
        self.audit = policy.AuditGate(
            policy.Thresholds(audit.prompt_at, audit.deny_at, audit.review_mutating)
        )
        self.otel_sink = exporter_from_env()  # None unless OTEL_* variables ask for export
        self.ledger = Ledger(self.prices)
        self.settings = Settings(self.home)
        reads = safety.read_mask(self.config, self.workspace)
        self.guard = WorkspaceGuard(
            self.workspace, settings=self.settings, yolo=self.yolo, reads=reads
        )
        self.confirm = UserConfirm(self.dispatcher) if self.interactive else None
        self.skills = FolderSkillSource.for_workspace(self.workspace, self.home)
        entries = [e.model_dump(exclude_none=True) for e in self.config.hooks]
        self.hook_engine, _ = hooks.from_config(entries, cwd=self.workspace)
        self.safety = safety.build(self.config, self.workspace)
        self.durable = open_home(self.home, self.config)  # closed by open_app
        self.leases = LeaseKeeper(self.durable.leases, self._lease_lost)  # one runner a session
        self.clock: sessionref.Clock = sessionref.SystemClock()
        self.live: dict[str, tuple[Message, ...]] = {}  # compacted history of finished runs
        self.markers: dict[str, str] = {}  # each session's reminder band marker (memory only)

    async def end_jobs(self) -> str | None:
        """End the session's background jobs (or keep them, `[sandbox] keep_background`); the
        notice naming them, None when there were none."""
        session = self.safety.commands.session
        return None if session is None else await session.close()

    # -- per agent ----------------------------------------------------------------------------
    def agent(self, name: str) -> AgentDef:
        retries = self.config.llm.step_retries
        custom = self.config.agents.get(name)
        if custom is not None:
            return catalog.custom_agent(name, custom.model_dump(), retries)
        return catalog.builtin(name, retries)

    def surface(self, agent: AgentDef, lane: fanout.Lane | None = None) -> Surface:
        options = SurfaceOptions(
            deferred=self.config.agent.deferred_tools,
            schema_budget=self.config.agent.schema_budget,
            yolo=self.yolo,
            host_stages=(hookengine.stage(self.hook_engine),) if self.hook_engine.hooks else (),
            commands=lane.commands if lane else self.safety.commands,
            audit=self.audit,
            confine=lane.declaration if lane else None,
        )
        return Surface(BUILTIN, agent.profile, self.guard, external=self.mcp.specs, options=options)

    # -- sessions -----------------------------------------------------------------------------
    def publish(self, session_id: str) -> Callable[[str, Mapping[str, Any]], None]:
        def publish(kind: str, payload: Mapping[str, Any]) -> None:
            delegation = str(payload.get("delegation_id", ""))
            logged = self.safety.for_log(payload)  # pii: what the rollout and traces keep
            if kind != "assistant_delta":  # deltas are display-only; the turn is persisted
                self.store.append_event(session_id, kind, logged, delegation_id=delegation)
            self._record_tools(session_id, kind, logged, delegation)
            for observer in self.observers:
                observer(Event(kind, logged, delegation))
            self.dispatcher.send(Event(kind, self.safety.for_display(payload), delegation))

        return publish

    def _record_tools(
        self, session_id: str, kind: str, payload: Mapping[str, Any], delegation: str
    ) -> None:
        if kind == "tool_call":
            self.store.record_tool_call(
                session_id,
                call_id=str(payload["call_id"]),
                name=str(payload["name"]),
                arguments=str(payload["arguments"]),
                delegation_id=delegation,
                started_at=time.time(),
            )
        elif kind == "tool_result":
            self.store.record_tool_result(
                session_id,
                str(payload["call_id"]),
                content=str(payload["content"]),
                ok=bool(payload["ok"]),
                kind=payload.get("kind"),
                ended_at=time.time(),
                delegation_id=delegation,  # parallel tasks may reuse call ids
            )

    def _account(self, session_id: str, agent: str, turn: AssistantTurn) -> None:
        step = self.ledger.record(turn, agent=agent)
        self.store.add_usage(
            session_id,
            model=step.model or self.engine.model,
            input_tokens=turn.usage.input_tokens,
            output_tokens=turn.usage.output_tokens,
            cache_read_tokens=turn.usage.cache_read_tokens,
            cache_write_tokens=turn.usage.cache_write_tokens,
            cost=step.cost,
        )

    def _program_observer(self, session_id: str, agent: str) -> Callable[[Any, Any], None]:
        """Host calls made by a program appear as children of the program call."""
        publish = self.publish(session_id)

        def observe(call: Any, record: Any) -> None:
            base = {
                "agent": agent,
                "delegation_id": "",
                "parent_call_id": call.meta.get("ptc_parent", ""),
                "call_id": record.call_id,
                "name": record.tool,
            }
            publish("program_call", {**base, "arguments": json.dumps(dict(call.args))})
            publish(
                "program_result",
                {
                    **base,
                    "ok": record.ok,
                    "stage": record.stage,
                    "kind": record.kind.value if record.kind else None,
                },
            )

        return observe

    def _lease_lost(self, session_id: str) -> None:
        """Another process took the session over (this one was frozen past the lease): the run
        stops at its next step boundary (`turn` says why). Called from the renewing thread."""
        self.pause.abandon()

    def _rollout(self, session_id: str, kind: str, payload: Mapping[str, Any]) -> None:
        d = str(payload.get("delegation_id", ""))
        self.store.append_event(session_id, kind, self.safety.for_log(payload), delegation_id=d)

    def _checkpoint(self, session_id: str, data: Mapping[str, Any]) -> None:
        self.store.write_checkpoint(session_id, step=int(data.get("step", 0)), data=dict(data))

    def _message(self, session_id: str, agent: str, message: Message, d: str) -> None:
        self.store.append_message(session_id, message.to_dict(), agent=agent, delegation_id=d)

    @contextlib.contextmanager
    def observed(self, session_id: str) -> Iterator[None]:
        """One turn's telemetry: it sees every event published until the turn is over."""
        telemetry = Telemetry(
            session_id,
            sink=self.otel_sink,
            prices=self.prices,
            on_warning=lambda f: self._rollout(session_id, WARNING_EVENT, f.to_dict()),
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
        return turn.new_session(
            self, task, self.agent(agent_name or self.config.agent.default).name
        )

    async def run(
        self,
        task: str,
        *,
        agent_name: str | None = None,
        session_id: str | None = None,
        resume: Decision | None = None,
        lane: fanout.Lane | None = None,
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
) -> AsyncIterator[App]:
    store = SessionStore(home / "sessions.db")
    servers = tuple(
        ServerConfig.from_mapping(name, server.model_dump(exclude_none=True))
        for name, server in sorted(config.mcp.items())
    )
    prices = PriceTable.from_config(
        {k: v.model_dump() for k, v in config.llm.prices.items()}, base=DEFAULT_PRICES
    )
    try:
        async with McpTools(servers) as mcp:
            app = App(
                config,
                home,
                workspace,
                yolo,
                store,
                engine or await build_engine(config.llm),
                mcp,
                interactive=interactive,
                prices=prices,
            )
            app.pruned = await anyio.to_thread.run_sync(
                economy.prune_spills, home / "state", config.agent.spill_max_age_days
            )
            try:
                async with contextlib.AsyncExitStack() as stack:
                    if app.safety.egress_proxy is not None:  # sandboxed egress, app-long
                        await stack.enter_async_context(app.safety.egress_proxy)
                    yield app
            finally:
                if (session := app.safety.commands.session) is not None:
                    session.close_now()  # a host that did not end_jobs: nothing outlives the app
                with anyio.CancelScope(shield=True):
                    await app.leases.close()
                app.durable.close()
                if app.otel_sink is not None:
                    app.otel_sink.shutdown()
    finally:
        store.close()
