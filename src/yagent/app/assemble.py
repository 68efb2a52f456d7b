"""Assembly: one run's parts wired together — the only place that knows all of them.

`open_app()` builds, for a workspace: settings and the workspace guard (with the YOLO mode), the
dispatcher and authorization loop, MCP servers (connected for the app's lifetime), hooks, the
Surface per agent, the Adapter, the session store, and the engine. `App.run()` runs one task with
one agent and records everything in the session: messages, the event rollout, tool calls and
results, usage and cost. Events are persisted at the publish point, then shown (dispatcher).
Each run also gets the context economy (`app.economy`: window, spill, offload, compaction
archive), the memories (`app.memories`) in its system prompt and the session references
(`app.sessionrefs`) in its task; a session continued in the same process keeps its compacted
context (`live`), one continued from the store starts from its full stored history.
Durability (`app.durable`, `app.runtrack`, in `home/durable.db`): each run is checkpointed per
step and its conclusion committed once; side-effecting tool calls run through `sideeffect`; calls a
dead process left without a result are settled, never re-run; `resume=` continues an interrupted
run from its checkpoint (same history, its step count, its loaded tools).
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from yagent.agents import catalog
from yagent.agents.activity import Monitor
from yagent.agents.catalog import AgentDef
from yagent.agents.context import system_prompt
from yagent.agents.loop import LoopConfig, run_agent_loop
from yagent.agents.pause import PauseGate
from yagent.agents.results import AgentResult
from yagent.app import economy, memories, safety, sessionrefs
from yagent.app.config import Config
from yagent.app.durable import Decision, open_home
from yagent.app.engines import build_engine
from yagent.app.runtrack import open_track
from yagent.app.telemetry import WARNING_EVENT, Telemetry, exporter_from_env
from yagent.kernel import hookengine, policy, sessionref
from yagent.llm import Message
from yagent.llm.pricing import DEFAULT_PRICES, Ledger, PriceTable
from yagent.llm.types import AssistantTurn, Engine
from yagent.memory import SessionStore, message_body
from yagent.messaging import Dispatcher, Event
from yagent.tools import browser, hooks, program, registry
from yagent.tools.adapter import Adapter, ToolContext
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

    def __post_init__(self) -> None:
        audit = self.config.audit
        self.audit = policy.AuditGate(
            policy.Thresholds(audit.prompt_at, audit.deny_at, audit.review_mutating)
        )
        self.otel_sink = exporter_from_env()  # None unless OTEL_* variables ask for export
        self.ledger = Ledger(self.prices)
        self.settings = Settings(self.home)
        self.guard = WorkspaceGuard(self.workspace, settings=self.settings, yolo=self.yolo)
        self.confirm = UserConfirm(self.dispatcher) if self.interactive else None
        self.skills = FolderSkillSource.for_workspace(self.workspace, self.home)
        entries = [e.model_dump(exclude_none=True) for e in self.config.hooks]
        self.hook_engine, _ = hooks.from_config(entries, cwd=self.workspace)
        self.safety = safety.build(self.config, self.workspace)
        self.durable = open_home(self.home, self.config)  # closed by open_app
        self.clock: sessionref.Clock = sessionref.SystemClock()
        self.live: dict[str, tuple[Message, ...]] = {}  # compacted history of finished runs

    # -- per agent ----------------------------------------------------------------------------
    def agent(self, name: str) -> AgentDef:
        retries = self.config.llm.step_retries
        custom = self.config.agents.get(name)
        if custom is not None:
            return catalog.custom_agent(name, custom.model_dump(), retries)
        return catalog.builtin(name, retries)

    def surface(self, agent: AgentDef) -> Surface:
        options = SurfaceOptions(
            deferred=self.config.agent.deferred_tools,
            schema_budget=self.config.agent.schema_budget,
            yolo=self.yolo,
            host_stages=(hookengine.stage(self.hook_engine),) if self.hook_engine.hooks else (),
            commands=self.safety.commands,
            audit=self.audit,
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

    def _rollout(self, session_id: str, kind: str, payload: Mapping[str, Any]) -> None:
        self.store.append_event(session_id, kind, self.safety.for_log(payload))

    def _checkpoint(self, session_id: str, data: Mapping[str, Any]) -> None:
        self.store.write_checkpoint(session_id, step=int(data.get("step", 0)), data=dict(data))

    def _message(self, session_id: str, agent: str, message: Message) -> None:
        self.store.append_message(session_id, message.to_dict(), agent=agent)

    async def run(
        self,
        task: str,
        *,
        agent_name: str | None = None,
        session_id: str | None = None,
        resume: Decision | None = None,
    ) -> tuple[str, AgentResult]:
        """Run `task`; a new session unless `session_id` continues one (its messages as history);
        `resume` (a CONTINUE decision for that session) continues its interrupted run instead."""
        if resume is not None and resume.run is not None:
            agent_name = resume.run.agent
        agent = self.agent(agent_name or self.config.agent.default)
        if session_id is None:
            info = self.store.create_session(
                workspace=str(self.workspace),
                title=task[:80],
                model=self.engine.model,
                meta={"agent": agent.name},
            )
            session_id, history = info.id, []
        elif (live := self.live.pop(session_id, None)) is not None:
            history = list(live)  # this process ran it: keep its compacted context
        else:
            history = [Message.from_dict(message_body(m)) for m in self.store.messages(session_id)]
        publish = self.publish(session_id)
        model_task, refs = sessionrefs.expand(
            self.store, task, session_id=session_id, continued=bool(history), clock=self.clock
        )
        if refs:
            publish("session_ref", {"references": refs})
        remembered = memories.inject(self.home, self.workspace)
        if remembered.worth_reporting:
            publish("memory", remembered.event())
        state_dir = self.home / "state" / session_id
        context = economy.context_settings(self.config, state_dir=state_dir, session_id=session_id)
        surface = self.surface(agent)
        if resume is not None:
            surface.restore_materialized(resume.materialized)
        track = await open_track(
            self.durable,
            store=self.store,
            session_id=session_id,
            agent=agent.name,
            task=task,
            max_steps=agent.max_steps,
            publish=publish,
            materialized=surface.materialized,
            resume=resume,
        )
        history = await track.settle(history)
        ctx = ToolContext(
            self.workspace,
            surface,
            session_id=session_id,
            confirm=self.confirm,
            skills=self.skills,
            state_dir=state_dir,
            spill=context.spill,
            pii=self.safety.pii,
            effects=self.durable.runner(session_id, publish, stopping=lambda: self.pause.abandoned),
        )
        adapter = Adapter(ctx, registry.executors(self.mcp.executors))
        ctx.extras[program.ADAPTER_KEY] = adapter  # programs reach MCP executors too
        ctx.extras[program.OBSERVER_KEY] = self._program_observer(session_id, agent.name)
        settings = self.config.agent
        cfg = LoopConfig(
            name=agent.name,
            system=system_prompt(
                agent,
                workspace=self.workspace,
                surface=surface,
                task=task,
                skills=self.skills.list(),
                autonomous=self.yolo >= Yolo.FULL,
                memory=remembered.text,
            ),
            engine=self.engine,
            adapter=adapter,
            max_steps=track.run.max_steps,
            stop_on_finish=agent.stop_on_finish,
            no_action_retry_limit=agent.no_action_retry_limit,
            step_retries=agent.step_retries,
            no_action_reminder=agent.no_action_reminder,
            parallel_limit=settings.max_parallel_tools,
            tool_timeout=settings.tool_timeout,
            publish=track.publisher(publish),
            rollout=lambda k, p: self._rollout(session_id, k, p),
            checkpoint=lambda data: self._checkpoint(session_id, data),
            monitor=Monitor(idle=settings.idle_timeout, total=settings.total_timeout),
            pause=self.pause,
            on_turn=lambda turn: self._account(session_id, agent.name, turn),
            on_message=lambda m: self._message(session_id, agent.name, m),
            context=context,
            archive=economy.archiver(self.store, session_id, agent.name),
            start_step=resume.start_step if resume is not None else 0,
            on_step=track.step,
        )
        telemetry = Telemetry(
            session_id,
            sink=self.otel_sink,
            prices=self.prices,
            on_warning=lambda f: self._rollout(session_id, WARNING_EVENT, f.to_dict()),
        )
        self.observers.append(telemetry.observe_event)
        try:
            async with track.guard():
                result = await run_agent_loop(cfg, model_task, history=history)
        finally:
            self.observers.remove(telemetry.observe_event)
            telemetry.close()
            with anyio.CancelScope(shield=True):
                await browser.close_session(ctx)
        await track.end(result.status.value, result.error)
        self.store.set_status(session_id, _session_status(result))
        self.live[session_id] = result.messages
        return session_id, result


def _session_status(result: AgentResult) -> str:
    value = result.status.value
    if value in ("finished", "answered", "max_steps"):
        return "finished"
    if value == "paused":
        return "paused"
    if value == "cancelled":
        return "cancelled"
    return "failed"


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
            try:
                yield app
            finally:
                app.durable.close()
                if app.otel_sink is not None:
                    app.otel_sink.shutdown()
    finally:
        store.close()
