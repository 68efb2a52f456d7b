"""run_agent_loop: the shared LLM–tool loop every agent runs.

Contract:
- Up to `max_steps` steps. Each step: the pause gate (the only one, at the step boundary), one model
  request (with the agent's own `step_retries`; an abandon cuts it at once, as
  `PauseGate.interruptible` allows: it has no side effect), then the step's tool calls as one
  `toolbatch`
  batch — read-only, non-serial calls (the Surface's one predicate) in parallel, others alone;
  every call gets exactly one result, committed in the original order after the join.
- Whether a call ends the run is `exitpolicy`'s decision alone; the deliverable is taken only
  through `exitpolicy.deliverable_text`. No tool name is compared here.
- A plain-text reply without tool calls gets a reminder (the agent's override, else the generic
  explore/edit/run/verify one) up to the agent's `no_action_retry_limit`; past it the run ends and
  says plainly that nothing was submitted.
- The host hears the run only through its `RunObserver` (`agents.observer`, `cfg.observer`).
  Every published event carries the delegation id; every step with tool calls gives one
  `sub_agent_activity` record (`on_activity`); `on_error_stop` is called once, in the
  termination path, only when the run ends with an error (including timeouts and cancellation).
  `on_step_start` is awaited at each step's start (after the pause gate, before the model
  request): the host's durable per-step progress record.
- A halted pause gate (`PauseGate.halt`: the host can no longer record the run) ends the run at
  the step boundary as "paused" with the halt's reason: checked after `on_step_start` (no model
  request follows) and after the step's calls (a successful exit call of that step does not
  conclude the run); a call of the step that has not started when the halt comes never starts
  (its result says so).
- Each call's execution has a backstop (`tool_timeout`, else `DEFAULT_TOOL_TIMEOUT`) that the
  adapter applies after authorization and raises above the tool's own declared bound, so the
  tool's own timeout answers first; a person's approval time never counts against it.
- Idle/total timeouts come from the `activity.Monitor` and end the run as `idle_timeout` /
  `total_timeout`, distinguishable from a person's cancel (propagated after `on_error_stop`).
- Every tool result joins the history through `untrusted.tool_message` (neutralised: forged
  bands and control tokens in it read as data), and is shown in its `tool_result` event as the
  model reads it.
- With `context` set, every request first goes through the run's `economy.Economy` (metering,
  compaction, offload) and every tool result through `Economy.admit` (spill, offload) before it
  joins the history; the deliverable is always taken from the tool's uncut result.
- A request carries the history as a `history.Messages` view, taken in O(1): no step copies the
  history (a stateless request must carry it all, but as a reference); the economy's rewrite of
  it (offload, compaction) is the only copy, and only when it changed something.
- The final report is read with `protocol` beside the deliverable (`reports.read_report`) and
  published as a `report` event when there is one, or a reason why a report-shaped one was not.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio

from yagent.agents import exitpolicy, untrusted
from yagent.agents.activity import Monitor
from yagent.agents.compaction import EngineSummarizer
from yagent.agents.economy import Economy
from yagent.agents.loopconfig import DEFAULT_TOOL_TIMEOUT, GENERIC_REMINDER, LoopConfig
from yagent.agents.pause import PauseAbandonedError
from yagent.agents.reports import read_report
from yagent.agents.results import (
    AgentResult,
    Status,
    error_note,
    model_call_failed,
    no_submission_note,
)
from yagent.agents.toolbatch import Batch
from yagent.kernel.context import reminder
from yagent.kernel.judge import toolfail
from yagent.llm import (
    EngineError,
    Image,
    Message,
    Request,
    StreamEvent,
    TextDelta,
    ToolCall,
    Usage,
)
from yagent.llm.history import History
from yagent.llm.retry import complete_with_retries
from yagent.llm.types import AssistantTurn, Engine
from yagent.tools.toolresult import ToolResult, failure_content


@dataclass
class _Run:
    cfg: LoopConfig
    history: History
    usage: Usage = field(default_factory=Usage)
    step: int = 0
    nudges: int = 0
    last_text: str = ""
    exit_content: str | None = None
    economy: Economy | None = None

    def add(self, message: Message) -> None:
        self.history.append(message)
        self.cfg.observer.on_message(message)

    def emit(self, kind: str, payload: Mapping[str, Any]) -> None:
        body = {"agent": self.cfg.name, "delegation_id": self.cfg.delegation_id, **payload}
        self.cfg.observer.on_event(kind, body)


async def run_agent_loop(
    cfg: LoopConfig, task: str, *, history: Sequence[Message] = ()
) -> AgentResult:
    run = _Run(cfg, History(history), step=cfg.start_step)
    run.add(Message("user", task))
    run.economy = _economy(run)
    status: Status = Status.MAX_STEPS
    error = ""
    stop: PauseAbandonedError | EngineError | None = None
    watch_scope = anyio.CancelScope()
    try:
        with watch_scope:
            async with anyio.create_task_group() as tg:
                if cfg.monitor is not None:
                    tg.start_soon(_watch, cfg.monitor, watch_scope, cfg.monitor_interval)
                try:
                    status = await _steps(run)
                except (PauseAbandonedError, EngineError) as exc:
                    stop = exc  # kept out of the task group so it is not wrapped in a group
                tg.cancel_scope.cancel()
    except anyio.get_cancelled_exc_class():
        _terminate(run, Status.CANCELLED, "cancelled")
        raise
    if watch_scope.cancelled_caught and cfg.monitor is not None and cfg.monitor.cause:
        status, error = Status.from_timeout(cfg.monitor.cause), str(cfg.monitor.cause)
    elif isinstance(stop, PauseAbandonedError):
        status, error = Status.PAUSED, str(stop)
    elif isinstance(stop, EngineError):
        status, error = Status.ERROR, model_call_failed(stop)
    return _terminate(run, status, error)


def _economy(run: _Run) -> Economy | None:
    cfg = run.cfg
    if cfg.context is None:
        return None

    def on_turn(turn: AssistantTurn) -> None:
        run.usage = run.usage + turn.usage
        cfg.observer.on_usage(turn)

    def heartbeat(_: StreamEvent) -> None:
        if cfg.monitor is not None:
            cfg.monitor.heartbeat()

    summarizer = EngineSummarizer(
        _Observed(cfg.engine, heartbeat),
        step_retries=cfg.step_retries,
        agent=cfg.name,
        on_turn=on_turn,
    )
    economy = Economy(
        cfg.context,
        emit=run.emit,
        archive=cfg.archive,
        summarizer=summarizer,
        before_compact=cfg.observer.before_compact,
    )
    economy.start(run.history.view())
    return economy


async def _watch(monitor: Monitor, scope: anyio.CancelScope, interval: float) -> None:
    await monitor.watch(scope, interval=interval)


def _terminate(run: _Run, status: Status, error: str) -> AgentResult:
    cfg = run.cfg
    if status.is_error:
        cfg.observer.on_error_stop(
            {
                "agent": cfg.name,
                "delegation_id": cfg.delegation_id,
                "step": run.step,
                "status": status.value,
                "error": error,
                "materialized": cfg.adapter.surface.materialized(),
            }
        )
    deliverable = exitpolicy.deliverable_text(run.exit_content) if run.exit_content else None
    payload = exitpolicy.exit_payload(run.exit_content) if run.exit_content else None
    if run.exit_content:
        note = ""
    elif error:
        note = error_note(run.last_text)
    else:
        note = no_submission_note(cfg.name, status, run.last_text)
    reading = read_report(
        cfg.name, payload, deliverable if deliverable is not None else run.last_text
    )
    result = AgentResult(
        status=status,
        text=run.last_text,
        deliverable=deliverable,
        exit_payload=dict(payload) if payload is not None else None,
        steps=run.step,
        messages=tuple(run.history.view()),
        usage=run.usage,
        error=error,
        note=note,
        report=reading.parsed,
        report_note=reading.note,
    )
    if reading.parsed is not None or reading.note:
        run.emit("report", reading.event())
    run.emit("run_end", {"status": status.value, "steps": run.step, "error": error, "note": note})
    return result


async def _steps(run: _Run) -> Status:
    cfg = run.cfg
    while run.step < cfg.max_steps:
        if cfg.pause is not None:
            await cfg.pause.wait(cfg.monitor)
        run.step += 1
        await cfg.observer.on_step_start(run.step)
        _halted(cfg)
        turn = await _ask_model(run)
        run.add(turn.message())
        if turn.text:
            run.last_text = turn.text
        if not turn.tool_calls:
            if run.nudges >= cfg.no_action_retry_limit:
                return Status.ANSWERED
            run.nudges += 1
            text = cfg.no_action_reminder or GENERIC_REMINDER
            run.add(Message("user", reminder.wrap(text)))
            run.emit("reminder", {"step": run.step, "text": text})
            continue
        finished = await _run_tools(run, turn.tool_calls)
        _halted(cfg)
        if finished:
            return Status.FINISHED
    return Status.MAX_STEPS


def _halted(cfg: LoopConfig) -> None:
    if cfg.pause is not None and cfg.pause.halted:
        raise PauseAbandonedError(cfg.pause.halted)


async def _ask_model(run: _Run) -> AssistantTurn:
    cfg = run.cfg
    surface = cfg.adapter.surface
    tools = tuple(surface.tool_defs())
    messages = run.history.view()  # O(1): the request does not copy the history
    if run.economy is not None:
        sent = await run.economy.before_request(
            messages, step=run.step, system=cfg.system, tools=tools
        )
        if sent is not messages:  # offloaded or compacted: the history is rewritten
            run.history.replace(sent)
            messages = run.history.view()
    request = Request(system=cfg.system, messages=messages, tools=tools, agent=cfg.name)
    run.emit("model_request", {"step": run.step, "tool_defs_hash": surface.tool_defs_hash()})

    def on_event(event: StreamEvent) -> None:
        if cfg.monitor is not None:
            cfg.monitor.heartbeat()
        if isinstance(event, TextDelta):
            run.emit("assistant_delta", {"text": event.text, "channel": event.channel})

    observed = _Observed(cfg.engine, on_event)
    with cfg.pause.interruptible() if cfg.pause is not None else contextlib.nullcontext():
        turn = await complete_with_retries(observed, request, step_retries=cfg.step_retries)
    run.usage = run.usage + turn.usage
    cfg.observer.on_usage(turn)
    run.emit(
        "assistant_turn",
        {
            "step": run.step,
            "text": turn.text,
            "tool_calls": [
                {"id": c.id, "name": c.name, "arguments": c.arguments} for c in turn.tool_calls
            ],
            "usage": turn.usage.to_dict(),
            "model": turn.model,
        },
    )
    return turn


@dataclass
class _Observed:
    """The agent's engine, with every stream event shown to the loop (deltas, heartbeats)."""

    engine: Engine
    on_event: Callable[[StreamEvent], None]

    @property
    def model(self) -> str:
        return self.engine.model

    async def stream(self, request: Request) -> AsyncIterator[StreamEvent]:
        async for event in self.engine.stream(request):
            self.on_event(event)
            yield event


async def _run_tools(run: _Run, calls: Sequence[ToolCall]) -> bool:
    cfg = run.cfg
    adapter = cfg.adapter
    surface = adapter.surface
    started = time.time()

    timeout = cfg.tool_timeout if cfg.tool_timeout is not None else DEFAULT_TOOL_TIMEOUT

    async def execute(tc: ToolCall) -> ToolResult:
        run.emit(
            "tool_call",
            {"step": run.step, "call_id": tc.id, "name": tc.name, "arguments": tc.arguments},
        )
        if cfg.pause is not None and cfg.pause.halted:  # checked after the call's own record
            kind = toolfail.Kind.CANCELLED
            msg = f"{tc.name} was not started: the run stopped ({cfg.pause.halted})"
            return ToolResult(tc.id, tc.name, False, failure_content(kind, msg), kind)
        result = await adapter.call(
            tc.name, tc.arguments, tc.id, caller=cfg.name, time_limit=timeout
        )
        if cfg.monitor is not None:
            cfg.monitor.heartbeat()
        return result

    def on_error(tc: ToolCall, exc: Exception) -> ToolResult:
        kind = toolfail.classify(exc)
        msg = f"{tc.name} failed: {type(exc).__name__}: {exc}"
        return ToolResult(tc.id, tc.name, False, failure_content(kind, msg), kind)

    def on_cancelled(tc: ToolCall) -> ToolResult:
        kind = toolfail.Kind.CANCELLED
        msg = f"{tc.name} was cancelled before it finished"
        return ToolResult(tc.id, tc.name, False, failure_content(kind, msg), kind)

    finished = False
    committed: list[dict[str, Any]] = []

    def on_commit(index: int, tc: ToolCall, result: ToolResult) -> None:
        nonlocal finished
        spec = surface.spec(tc.name)
        content, facts = result.content, {}
        if run.economy is not None:  # spilled pages are neutralised when they are read back
            admitted = run.economy.admit(spec, content)
            content, facts = admitted.content, dict(admitted.facts)
        images = tuple(Image(mime, data) for mime, data in result.images)
        message = untrusted.tool_message(tc.id, tc.name, content, images)
        run.add(message)
        run.emit(
            "tool_result",
            {
                "step": run.step,
                "call_id": tc.id,
                "name": tc.name,
                "ok": result.ok,
                "kind": result.kind.value if result.kind else None,
                "content": message.content,
                **facts,
            },
        )
        committed.append({"call_id": tc.id, "name": tc.name, "ok": result.ok})
        if exitpolicy.ends_run(spec, ok=result.ok, stop_on_finish=cfg.stop_on_finish):
            finished = True
            run.exit_content = result.content

    batch: Batch[ToolCall, ToolResult] = Batch(
        parallel=lambda tc: surface.is_parallelizable(tc.name),
        execute=execute,
        on_error=on_error,
        on_cancelled=on_cancelled,
        limit=cfg.parallel_limit,
        own_bound=lambda tc: surface.bounds_itself(tc.name),
    )
    try:
        await batch.run(calls, on_commit)
    finally:
        cfg.observer.on_activity(
            "sub_agent_activity",
            {
                "agent": cfg.name,
                "delegation_id": cfg.delegation_id,
                "step": run.step,
                "calls": committed,
                "started_at": started,
                "ended_at": time.time(),
                "parallel_peak": batch.peak,
            },
        )
    return finished
