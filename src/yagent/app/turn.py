"""One agent run inside an `App` (`App.run` is this): the session it belongs to, its history,
the surface and tool context, durability tracking, the loop, and what is recorded when it ends.
It sees the app only as `app.services.TurnServices` (its long-lived services), never `App`
itself, and the session as its `app.opensession.OpenSession`, held (never dropped from the
app's table of open sessions) from once the lease is taken until the run ends.

Contract: see `App.run` in `app.assemble` — a new session unless `session_id` continues one (its
messages as history, or the compacted context this process kept); `resume` continues an
interrupted run from its checkpoint. The session's lease (`app.lease`) is taken before its
history is read: a session another live process runs is refused (`SessionBusyError`), so no
second runner settles the first one's calls. Stored history reaches the model through
`app.history.from_store` (one result per call, no repeated turn, every message passed through
`untrusted.restored`). A `lane` is one confined task of a parallel run (fresh history, its own
delegation id on everything it records, its events observed by the fan-out's telemetry turn).
The session's status is set from how the run ended. The whole run (its reminders, session
references, memories, compaction) works under the session's own band marker
(`OpenSession.marker`, drawn per session, kept in memory only, never written to a store or an
event). Every write of the run's record goes through the session's step log and the app's
`full` (`app.fulldisk`): a full disk halts the run at its next step boundary with what is stored
an exact prefix of what happened; the log is closed (what is pending written) however it ends.
Hooks (`app.hookrun`): `session_start` before a session's first run in this process, then
`user_prompt_submit` (a denial ends the run as an error before the model is asked), the
`pre_tool_use` ring and `post_tool_use` on every call, `pre_compact` before each compaction,
and `stop` (`subagent_stop` for a parallel task's lane) once the loop has ended.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import anyio

from yagent.agents import instructions
from yagent.agents.activity import Monitor
from yagent.agents.catalog import AgentDef
from yagent.agents.context import system_prompt
from yagent.agents.economy import ContextSettings
from yagent.agents.loop import run_agent_loop
from yagent.agents.loopconfig import LoopConfig
from yagent.agents.results import AgentResult, Status
from yagent.app import (
    blueprint,
    contextconfig,
    delegationresume,
    hookrun,
    mcprefs,
    mcpsampling,
    memories,
    sessionrefs,
)
from yagent.app.delegation import Runner
from yagent.app.durable import ResumeDecision
from yagent.app.history import from_store
from yagent.app.lane import Lane, framed
from yagent.app.opensession import OpenSession
from yagent.app.pastsessions import StoreReader
from yagent.app.recorder import SessionObserver
from yagent.app.runtrack import RunTrack, open_track
from yagent.app.services import TurnServices
from yagent.app.stopkind import stop_kind
from yagent.kernel.context import reminder
from yagent.llm import Message, Usage
from yagent.llm.types import with_model
from yagent.tools import hostservices, invocation, registry
from yagent.tools.adapter import Adapter, ToolContext
from yagent.tools.mcp import content, sampling
from yagent.tools.surface import Surface
from yagent.tools.yolo import Yolo


def new_session(services: TurnServices, task: str, agent: str, model: str = "") -> str:
    """A new session of this workspace for `task` (its title), run by `agent` (on `model`, else
    the engine's); its id."""
    info = services.store.create_session(
        workspace=str(services.workspace),
        title=task[:80],
        model=model or services.engine.model,
        meta={"agent": agent},
    )
    return info.id


async def run_task(
    services: TurnServices,
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
    delegation = lane.delegation_id if lane else ""
    if resume is not None and resume.run is not None:
        agent_name = resume.run.agent
    agent = framed(lane, services.agent(agent_name or services.config.agent.default))
    new = session_id is None
    if session_id is None:
        session_id = new_session(services, task, agent.name, agent.model)
    await services.leases.take(session_id)  # before its history is read: one live runner a session
    with services.sessions.held(session_id) as session:  # never dropped while this run is live
        if new:
            history: list[Message] = []
        elif lane is None and (live := session.take_live()) is not None:
            history = list(live)  # this process ran it: keep its compacted context
        else:  # this run's own messages (a parallel task's lane starts with none)
            history = from_store(services.store.messages(session_id, delegation_id=delegation))
        # the session's own band marker: every reminder made or checked in this run carries it
        with reminder.using(session.marker):
            task = reminder.reseal(task)
            return await _run(services, session, task, agent, history, resume, lane)


async def _run(
    services: TurnServices,
    session: OpenSession,
    task: str,
    agent: AgentDef,
    history: list[Message],
    resume: ResumeDecision | None,
    lane: Lane | None,
) -> tuple[str, AgentResult]:
    delegation = lane.delegation_id if lane else ""
    session_id, publish = session.id, session.publish
    model_task = await _model_task(services, session, task, continued=bool(history))
    remembered = memories.inject(services.home, services.workspace)
    if remembered.worth_reporting:
        publish("memory", remembered.event())
    # the hooks outlive the run (`session_end` when the app closes): they publish by session id
    hooks = services.hooks.for_run(
        session_id, services.sessions.publisher(session_id), agent.name, delegation
    )
    await hooks.session_start(continued=bool(history))
    blocked = await hooks.prompt(task)
    if blocked is not None:
        return session_id, _refused(services, session_id, agent.name, blocked, publish)
    state_dir = services.home / "state" / session_id
    context = contextconfig.context_settings(
        services.config,
        state_dir=state_dir,
        session_id=session_id,
        on_spill_error=lambda exc: services.full.note(state_dir / "spill", exc),
    )
    surface = services.surface(agent, lane, hooks)
    if resume is not None:
        surface.restore_materialized(resume.materialized)
    track = await open_track(
        services.durable,
        store=services.store,
        session_id=session_id,
        agent=agent.name,
        task=task,
        max_steps=agent.max_steps,
        publish=publish,
        materialized=surface.materialized,
        resume=resume,
        delegation_id=delegation,
        full=services.full,
    )
    settings = services.config.agent
    monitor = (  # a delegated run's watchdog was made when it got its slot (`app.delegation`)
        lane.link.monitor
        if lane is not None and lane.link is not None
        else Monitor(idle=settings.idle_timeout, total=settings.total_timeout)
    )
    delegations = Runner(services, session, agent.name, lane, monitor)
    history = await delegationresume.settle(services, delegations, surface, history)
    history = await track.settle(history)
    ctx, adapter = _tools(services, session, agent, lane, surface, hooks, context, delegations)
    record = session.recorder()
    cfg = LoopConfig(
        name=agent.name,
        system=_system(services, agent, surface, task, remembered.text),
        engine=with_model(services.engine, agent.model),  # [agents.X] model, an imported agent's
        adapter=adapter,
        max_steps=track.run.max_steps,
        stop_on_finish=agent.stop_on_finish,
        no_action_retry_limit=agent.no_action_retry_limit,
        step_retries=agent.step_retries,
        delegation_id=delegation,
        no_action_reminder=agent.no_action_reminder,
        parallel_limit=settings.max_parallel_tools,
        tool_timeout=settings.tool_timeout,
        observer=SessionObserver(
            record,
            agent=agent.name,
            delegation_id=delegation,
            publish=track.publisher(publish),
            step_started=track.step,
            before_compact=hooks.before_compact,
        ),
        monitor=monitor,
        pause=services.pause,
        context=context,
        archive=contextconfig.archiver(services.store, session_id, agent.name),
        start_step=resume.start_step if resume is not None else 0,
    )
    try:  # a parallel task's events belong to the fan-out's telemetry turn
        with services.observed(session) if lane is None else contextlib.nullcontext():
            async with track.guard():
                with services.mcp.watching(_learner(services, surface, adapter, publish)):
                    result = await run_agent_loop(cfg, model_task, history=history)
    finally:
        session.close()  # what the run left pending, however it ended
        with anyio.CancelScope(shield=True):
            await hostservices.close_browser(ctx)
    await _ended(services, session, lane, hooks, track, result)
    return session_id, result


async def _model_task(
    services: TurnServices, session: OpenSession, task: str, *, continued: bool
) -> str:
    """The task as the model reads it: its session references and MCP resources expanded (each
    expansion published)."""
    model_task, refs = sessionrefs.expand(
        services.store, task, session_id=session.id, continued=continued, clock=services.clock
    )
    if refs:
        session.publish("session_ref", {"references": refs})
    resource_bands, resource_refs = await mcprefs.expand(services.mcp, task)
    if resource_refs:
        model_task += "\n\n" + resource_bands
        session.publish("mcp_resource_ref", {"references": resource_refs})
    return model_task


def _system(
    services: TurnServices, agent: AgentDef, surface: Surface, task: str, memory: str
) -> str:
    """The run's system prompt: the agent's, its tools, skills, memories and instructions."""
    return system_prompt(
        agent,
        workspace=services.workspace,
        surface=surface,
        task=task,
        skills=services.skills.list(),
        autonomous=services.yolo >= Yolo.FULL,
        memory=memory,
        sources=instructions.Sources(
            services.workspace, services.start, services.home, Path.home(), services.guard.reads
        ),
    )


async def _ended(
    services: TurnServices,
    session: OpenSession,
    lane: Lane | None,
    hooks: hookrun.RunHooks,
    track: RunTrack,
    result: AgentResult,
) -> None:
    """What follows the loop's end: a lost lease said, the stop hooks, the run's conclusion
    committed, the session's status, and (a top-level run) the live context kept."""
    if session.id in services.leases.lost:
        why = "another yagent process took this session over (this one stopped renewing its lease)"
        session.publish("session_lease", {"lost": True, "reason": why + "; this run stopped"})
    await hooks.stopped(result.status.value, sub_agent=lane is not None)
    await track.end(result.status.value, result.error)
    status = stop_kind(result.status).session_status
    services.full.write(services.store.path, services.store.set_status, session.id, status)
    if lane is None:
        session.live = result.messages


def _tools(
    services: TurnServices,
    session: OpenSession,
    agent: AgentDef,
    lane: Lane | None,
    surface: Surface,
    hooks: hookrun.RunHooks,
    context: ContextSettings,
    delegations: Runner,
) -> tuple[ToolContext, Adapter]:
    """The run's tool context and the adapter its calls go through, with what executors reach."""
    session_id, publish = session.id, session.publish
    delegation = lane.delegation_id if lane else ""
    ctx = ToolContext(
        services.workspace,
        surface,
        session_id=session_id,
        delegation_id=delegation,
        confirm=services.confirm,
        skills=services.skills,
        state_dir=services.home / "state" / session_id,
        spill=context.spill,
        pii=services.safety.pii,
        effects=services.durable.runner(
            session_id,
            publish,
            stopping=lambda: services.pause.abandoned,
            delegation_id=delegation,
            on_store_error=lambda exc: services.full.note(services.durable.path, exc),
        ),
        after_call=hooks.after_call if services.hook_engine.hooks else None,
    )
    adapter = Adapter(ctx, registry.executors(services.mcp.executors))
    record = session.recorder()
    extras = ctx.services
    extras.put(hostservices.ADAPTER_KEY, adapter)  # programs reach MCP executors too
    extras.put(hostservices.OBSERVER_KEY, record.program_observer(agent.name))
    extras.put(invocation.PUBLISH, publish)  # egress, progress, MCP requests reach the rollout
    extras.put(hostservices.RUNNER_KEY, delegations)
    extras.put(content.VISION_KEY, services.config.llm.takes_images())
    extras.put(hostservices.READER_KEY, StoreReader(services.store, services.workspace, session_id))
    extras.put(
        hostservices.BLUEPRINT_KEY, lambda: blueprint.view(services.home, services.workspace)
    )
    extras.put(
        sampling.SAMPLER_KEY,
        mcpsampling.sampler(services.engine, agent.name, record.usage),
    )
    allow = services.openings  # allow_local + answers (localask)
    hostservices.configure_web(ctx, hostservices.WebConfig(allow=allow))
    hostservices.configure_browser(ctx, hostservices.BrowserConfig(allow=allow))
    adapter.require_services()  # every granted tool's declared services are set, or no run
    return ctx, adapter


def _refused(
    services: TurnServices, session_id: str, agent: str, reason: str, publish: hookrun.Publish
) -> AgentResult:
    """The result of a run a `user_prompt_submit` hook refused: the model was never asked."""
    publish("run_end", {"agent": agent, "status": "error", "steps": 0, "error": reason})
    services.store.set_status(session_id, "failed")
    return AgentResult(Status.ERROR, "", None, None, 0, (), Usage(), error=reason)


def _learner(
    services: TurnServices,
    surface: Surface,
    adapter: Adapter,
    publish: Callable[[str, Mapping[str, Any]], None],
) -> Callable[[], None]:
    """When an MCP server's tools change mid-run, this run's Surface and Adapter learn them."""

    def learn() -> None:
        surface.rebuild(external=services.mcp.specs)
        adapter.learn(services.mcp.executors)
        publish("mcp_tools_changed", {"external_tools": len(services.mcp.specs)})

    return learn
