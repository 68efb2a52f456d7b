"""One agent run inside an `App` (`App.run` is this): the session it belongs to, its history,
the surface and tool context, durability tracking, the loop, and what is recorded when it ends.

Contract: see `App.run` in `app.assemble` — a new session unless `session_id` continues one (its
messages as history, or the compacted context this process kept); `resume` continues an
interrupted run from its checkpoint. The session's lease (`app.lease`) is taken before its
history is read: a session another live process runs is refused (`SessionBusyError`), so no
second runner settles the first one's calls. Stored history reaches the model through
`app.history.from_store` (one result per call, no repeated turn, every message passed through
`untrusted.restored`). A `lane` is one confined task of a parallel run (fresh history, its own
delegation id on everything it records, its events observed by the fan-out's telemetry turn).
The session's status is set from how the run ended. The whole run (its reminders, session
references, memories, compaction) works under the session's own band marker (`App.markers`,
drawn per session, kept in memory only, never written to a store or an event).
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

import anyio

from yagent.agents.activity import Monitor
from yagent.agents.catalog import AgentDef
from yagent.agents.context import system_prompt
from yagent.agents.loop import LoopConfig, run_agent_loop
from yagent.agents.results import AgentResult
from yagent.app import economy, fanout, memories, sessionrefs
from yagent.app.durable import Decision
from yagent.app.history import from_store
from yagent.app.runtrack import open_track
from yagent.kernel import reminder
from yagent.llm import Message
from yagent.tools import bash, browser, program, registry
from yagent.tools.adapter import Adapter, ToolContext
from yagent.tools.guard import Yolo

if TYPE_CHECKING:
    from yagent.app.assemble import App


def new_session(app: App, task: str, agent: str) -> str:
    """A new session of this workspace for `task` (its title), run by `agent`; its id."""
    info = app.store.create_session(
        workspace=str(app.workspace), title=task[:80], model=app.engine.model, meta={"agent": agent}
    )
    return info.id


async def run_task(
    app: App,
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
    delegation = lane.delegation_id if lane else ""
    if resume is not None and resume.run is not None:
        agent_name = resume.run.agent
    agent = fanout.framed(lane, app.agent(agent_name or app.config.agent.default))
    new = session_id is None
    if session_id is None:
        session_id = new_session(app, task, agent.name)
    await app.leases.take(session_id)  # before its history is read: one live runner a session
    if new:
        history: list[Message] = []
    elif lane is None and (live := app.live.pop(session_id, None)) is not None:
        history = list(live)  # this process ran it: keep its compacted context
    else:  # this run's own messages (a parallel task's lane starts with none)
        history = from_store(app.store.messages(session_id, delegation_id=delegation))
    # the session's own band marker: every reminder made or checked in this run carries it
    with reminder.using(app.markers.setdefault(session_id, reminder.new_marker())):
        return await _run(app, reminder.reseal(task), agent, session_id, history, resume, lane)


async def _run(
    app: App,
    task: str,
    agent: AgentDef,
    session_id: str,
    history: list[Message],
    resume: Decision | None,
    lane: fanout.Lane | None,
) -> tuple[str, AgentResult]:
    delegation = lane.delegation_id if lane else ""
    publish = app.publish(session_id)
    model_task, refs = sessionrefs.expand(
        app.store, task, session_id=session_id, continued=bool(history), clock=app.clock
    )
    if refs:
        publish("session_ref", {"references": refs})
    remembered = memories.inject(app.home, app.workspace)
    if remembered.worth_reporting:
        publish("memory", remembered.event())
    state_dir = app.home / "state" / session_id
    context = economy.context_settings(app.config, state_dir=state_dir, session_id=session_id)
    surface = app.surface(agent, lane)
    if resume is not None:
        surface.restore_materialized(resume.materialized)
    track = await open_track(
        app.durable,
        store=app.store,
        session_id=session_id,
        agent=agent.name,
        task=task,
        max_steps=agent.max_steps,
        publish=publish,
        materialized=surface.materialized,
        resume=resume,
        delegation_id=delegation,
    )
    history = await track.settle(history)
    ctx = ToolContext(
        app.workspace,
        surface,
        session_id=session_id,
        delegation_id=delegation,
        confirm=app.confirm,
        skills=app.skills,
        state_dir=state_dir,
        spill=context.spill,
        pii=app.safety.pii,
        effects=app.durable.runner(
            session_id, publish, stopping=lambda: app.pause.abandoned, delegation_id=delegation
        ),
    )
    adapter = Adapter(ctx, registry.executors(app.mcp.executors))
    ctx.extras[program.ADAPTER_KEY] = adapter  # programs reach MCP executors too
    ctx.extras[program.OBSERVER_KEY] = app._program_observer(session_id, agent.name)
    ctx.extras[bash.PUBLISH_KEY] = publish  # run_bash's egress events reach the rollout
    settings = app.config.agent
    cfg = LoopConfig(
        name=agent.name,
        system=system_prompt(
            agent,
            workspace=app.workspace,
            surface=surface,
            task=task,
            skills=app.skills.list(),
            autonomous=app.yolo >= Yolo.FULL,
            memory=remembered.text,
        ),
        engine=app.engine,
        adapter=adapter,
        max_steps=track.run.max_steps,
        stop_on_finish=agent.stop_on_finish,
        no_action_retry_limit=agent.no_action_retry_limit,
        step_retries=agent.step_retries,
        delegation_id=delegation,
        no_action_reminder=agent.no_action_reminder,
        parallel_limit=settings.max_parallel_tools,
        tool_timeout=settings.tool_timeout,
        publish=track.publisher(publish),
        rollout=lambda k, p: app._rollout(session_id, k, p),
        checkpoint=lambda data: app._checkpoint(session_id, data),
        monitor=Monitor(idle=settings.idle_timeout, total=settings.total_timeout),
        pause=app.pause,
        on_turn=lambda turn: app._account(session_id, agent.name, turn),
        on_message=lambda m: app._message(session_id, agent.name, m, delegation),
        context=context,
        archive=economy.archiver(app.store, session_id, agent.name),
        start_step=resume.start_step if resume is not None else 0,
        on_step=track.step,
    )
    try:  # a parallel task's events belong to the fan-out's telemetry turn
        with app.observed(session_id) if lane is None else contextlib.nullcontext():
            async with track.guard():
                result = await run_agent_loop(cfg, model_task, history=history)
    finally:
        with anyio.CancelScope(shield=True):
            await browser.close_session(ctx)
    if session_id in app.leases.lost:
        why = "another yagent process took this session over (this one stopped renewing its lease)"
        publish("session_lease", {"lost": True, "reason": why + "; this run stopped"})
    await track.end(result.status.value, result.error)
    app.store.set_status(session_id, _session_status(result))
    if lane is None:
        app.live[session_id] = result.messages
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
