"""The command's async flows: one turn (`run_turn`, also the interactive session's, `cli.repl`),
one-shot runs, replay.

Ctrl-C: the first asks the running turn to stop and drains it (`kernel.durable.drain`): the turn
stops at its next step boundary, no new side effect starts, and what is in flight gets `[agent]
drain_budget` seconds to finish before the turn is force-stopped (its tools cancelled and
accounted for; the session keeps what happened); a model request in flight is cut at once (it has
no side effect). While commands run, it says so on stderr at once, with what a second press
does (a press sent before that line shows may reach the process as the same signal: the kernel
keeps one pending SIGINT); with none running nothing is said (streamed text is not cut). A
second one within `KILL_WINDOW` (2 s) kills every live foreground process group and
exits at once (status 130) — the only way out when a tool ignores cancellation; a
later one says so and opens a new window.
SIGTERM (shutdown) drains the same way, then exits with status 143.
A one-shot run is a turn of its session like an interactive one: the journal range of its file
changes is recorded (`cli.edits.Turns`), so `/undo` after `yagent resume` and `yagent undo` revert
it.
A turn stopped by a full disk under the home (`app.fulldisk`) ends the command: one line naming
the file and `yagent resume SID`, exit status 75 — its record is sealed, no other turn may run.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import sys
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import anyio

from yagent.agents import agentfiles, catalog
from yagent.agents.pause import PauseGate
from yagent.agents.results import AgentResult
from yagent.app import projectkeys
from yagent.app.assemble import App, open_app
from yagent.app.config import ConfigError, load
from yagent.app.durable import ResumeDecision
from yagent.app.engines import keyless_notice
from yagent.app.safety import with_allow_local
from yagent.cli import edits, lineout, outcome
from yagent.cli.render import Ask, Renderer
from yagent.cli.runend import report_divergences, resume_line, stop_if_full
from yagent.kernel.durable import drain
from yagent.llm.replay import Recording, ReplayEngine
from yagent.llm.types import Engine
from yagent.memory import SessionStoreError
from yagent.tools.shell import kill_live_process_groups, live_groups
from yagent.tools.yolo import Yolo

KILL_WINDOW = 2.0
"""Seconds within which a second Ctrl-C kills the live process groups and exits (a seam)."""


@dataclass(frozen=True, slots=True)
class Options:
    workspace: Path
    home: Path
    yolo: Yolo = Yolo.OFF
    json_mode: bool = False
    agent: str | None = None
    start: Path | None = None  # where the person started yagent, when below the workspace root
    allow_local: tuple[str, ...] = ()  # --allow-local: this run's openings ([network])
    fail_on_no_submit: bool = False  # --fail-on-no-submit: a plain reply is a failure too
    max_turns: int | None = None  # --max-turns: model calls an agent may make in this run
    model: str | None = None  # --model: the default model of this run ([llm] model)


_VOLATILE = (
    (re.compile(r'"duration": [0-9.eE+-]+'), '"duration": <t>'),
    # byte counts of shell output move with the timings printed in it ("in 9.8s" / "in 10.1s")
    (re.compile(r'"(total|shown)_bytes": \d+'), r'"\1_bytes": <n>'),
    (re.compile(r"\bin [0-9.]+s\b"), "in <t>s"),
    (re.compile(r"/tmp/[^\s\"']+"), "<tmp>"),
    # a delegation id ends with its session's prefix, new in every replayed session
    (re.compile(r"(\.[A-Za-z0-9_~-]+)@[0-9a-f]{8}\b"), r"\1@<session>"),
)


def normalise(text: str) -> str:
    """Tool output with timings and temp paths masked, so replays compare what matters."""
    for pattern, replacement in _VOLATILE:
        text = pattern.sub(replacement, text)
    return text


def start_notices(app: App, renderer: Renderer) -> None:
    """What went wrong while the app opened, said before the run (never silently dropped)."""
    withheld = projectkeys.notice(app.config.project)
    if withheld:
        renderer.notice(withheld)
    keyless = keyless_notice(app.config.llm)
    if keyless:
        renderer.notice(keyless)
    for line in app.config.hook_notices:
        renderer.notice(line)
    for server, problem in app.mcp.problems:
        renderer.notice(f"MCP server {server} unavailable: {problem}")
    for server, note in app.mcp.notes:
        renderer.notice(f"MCP server {server}: {note}")
    failed = app.pruned.failed
    if failed:
        more = f" (and {len(failed) - 3} more)" if len(failed) > 3 else ""
        renderer.notice(f"old spilled outputs not removed: {'; '.join(failed[:3])}{more}")


def replay_engine(path: Path, agent_names: list[str]) -> ReplayEngine:
    markers = {name: catalog.builtin(name, 0).marker for name in agent_names}
    return ReplayEngine(Recording.load(path), markers=markers, normalise=normalise)


async def _interrupts(on_first: Callable[[int], None]) -> None:
    with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        first: float | None = None
        async for signum in signals:
            now = time.monotonic()
            if first is None:
                first = now
                if signum == signal.SIGINT and live_groups():
                    sys.stderr.write(
                        f"\nyagent: stopping the turn; Ctrl-C again within {KILL_WINDOW:g}s "
                        "kills its running commands and exits\n"
                    )
                on_first(signum)
            elif now - first <= KILL_WINDOW:
                killed = kill_live_process_groups()
                sys.stderr.write(f"\nyagent: killed {killed} live process group(s); exiting\n")
                os._exit(130)
            else:  # a late second press starts a new window instead of killing
                first = now
                sys.stderr.write(
                    f"\nyagent: still stopping the turn; press Ctrl-C again within "
                    f"{KILL_WINDOW:g}s to kill its processes and exit\n"
                )


async def _reader_gone(renderer: Renderer, on_first: Callable[[int], None]) -> None:
    """The reader of the --json stream went away: the turn is stopped as on Ctrl-C."""
    await renderer.reader_gone()
    renderer.stopped_for_reader = True
    on_first(signal.SIGPIPE)


async def _drain(app: App, turns: drain.TurnGroup) -> None:
    """Ask the turn to stop at its next step boundary, drain it within the budget, say how."""
    app.pause.abandon()
    report = await drain.drain(turns, drain.budget(app.config.agent.drain_budget))
    if report.forced:
        sys.stderr.write(
            f"\nyagent: the turn did not stop within {report.budget:g}s and was stopped"
            + (f"; {report.stuck} still unwinding" if report.stuck else "")
            + "\n"
        )


async def run_turn(
    app: App,
    renderer: Renderer,
    task: str,
    session_id: str | None,
    agent: str | None,
    *,
    resume: ResumeDecision | None = None,
) -> tuple[str, AgentResult | None]:
    """One task in `app`, as a drainable turn; None as result when the drain had to force-stop
    it. The session is created here, before the turn, when none is given: its id comes back
    even from a turn that was stopped, so the conversation goes on in it. After a SIGTERM the
    process exits (143) once the turn is drained."""
    if session_id is None:
        session_id = app.new_session(task, agent)
    outcome: list[tuple[str, AgentResult]] = []
    turns = drain.TurnGroup()
    signals: list[int] = []
    renderer.interrupted = False
    async with anyio.create_task_group() as tg:
        tg.start_soon(renderer.pump, app)

        def first(signum: int) -> None:
            signals.append(signum)
            renderer.interrupted = True
            tg.start_soon(_drain, app, turns)

        tg.start_soon(_interrupts, first)
        tg.start_soon(_reader_gone, renderer, first)
        run = partial(app.run, task, agent_name=agent, session_id=session_id, resume=resume)
        with contextlib.suppress(drain.TurnStoppedError):  # force-stopped: no result
            outcome.append(await turns.run(run))
        tg.cancel_scope.cancel()
    if app.pause.abandoned:
        app.pause = PauseGate()  # the next turn starts with a gate nobody abandoned
    renderer.rest(app.dispatcher)  # what was published after the pump stopped
    if signal.SIGTERM in signals:
        sys.stderr.write("yagent: shut down after draining the turn\n")
        raise SystemExit(143)
    if not outcome:
        return session_id, None
    return outcome[0]


@contextlib.asynccontextmanager
async def cli_app(
    opts: Options,
    renderer: Renderer,
    engine: Engine | None = None,
    *,
    interactive: bool = True,
    json_header: bool = False,
) -> AsyncIterator[App]:
    """The app for one CLI command: config loaded for the workspace, opened, and what went
    wrong while opening said first (`start_notices`). `json_header`: the `--json` schema line
    is written once the app is open, before any event — a command refused while opening
    (exit 2) writes nothing on standard output."""
    config = with_allow_local(load(home=opts.home, workspace=opts.workspace), opts.allow_local)
    if opts.model:
        config = config.model_copy(
            update={"llm": config.llm.model_copy(update={"model": opts.model})}
        )
    _known_agent(opts.agent, opts.workspace, list(config.agents))
    for name, custom in config.agents.items():  # a broken [agents.X] is refused, used or not
        try:
            if not catalog.topology_only(name, custom.model_dump()):
                catalog.custom_agent(name, custom.model_dump(), 0)
        except catalog.AgentConfigError as exc:
            raise ConfigError(f"[agents.{name}]: {exc}") from None
    async with open_app(
        config,
        home=opts.home,
        workspace=opts.workspace,
        yolo=opts.yolo,
        interactive=interactive,
        engine=engine,
        start=opts.start,
    ) as app:
        app.max_turns = opts.max_turns
        renderer.stdout_wait = config.agent.stdout_wait
        if json_header:  # the first line: the version of the lines' schema
            renderer.out.write(json.dumps(outcome.HEADER) + "\n")
        renderer.attach(app.dispatcher)  # --json: every event written as it is published
        start_notices(app, renderer)
        try:
            yield app
        finally:
            with anyio.CancelScope(shield=True):
                ended = await app.end_jobs()
            if ended:
                renderer.notice(ended)


def _known_agent(name: str | None, workspace: Path, custom: list[str]) -> None:
    """`--agent` names a built-in, configured or imported (`.claude/agents`) agent; anything else
    is a usage error (exit 2) naming every place agents come from. Whether an imported one may
    run (project trust) is the app's to say."""
    files = agentfiles.find(workspace, Path.home())
    if name is None or name in custom or name in catalog.BUILTIN_AGENTS or name in files:
        return
    raise ConfigError(
        f"unknown agent {name!r} (--agent); built in: {', '.join(catalog.BUILTIN_AGENTS)}; "
        f"yours: {', '.join(sorted(custom)) or 'none'}; "
        f"from .claude/agents: {agentfiles.names(files.values())}"
    )


async def run_once(
    opts: Options,
    task: str,
    *,
    ask: Ask | None,
    engine: Engine | None = None,
    session_id: str | None = None,
    resume: ResumeDecision | None = None,
) -> tuple[str, AgentResult | None]:
    session_id, result, _ = await run_command(
        opts, task, ask=ask, engine=engine, session_id=session_id, resume=resume
    )
    return session_id, result


async def run_command(
    opts: Options,
    task: str,
    *,
    ask: Ask | None,
    engine: Engine | None = None,
    session_id: str | None = None,
    resume: ResumeDecision | None = None,
) -> tuple[str, AgentResult | None, int]:
    """One task run once; with its exit status (`cli.outcome`: 130 when it was cancelled; the
    --json stream's own when a line could not be written, `cli.lineout.end`)."""
    renderer = Renderer(json_mode=opts.json_mode, ask=ask, out=lineout.display(opts.json_mode))
    ids = [session_id or ""]
    try:
        session_id, result, status = await _run_command(
            opts, renderer, task, ids, engine=engine, session_id=session_id, resume=resume
        )
    except BaseException:
        with anyio.CancelScope(shield=True):  # the exit already on its way is kept
            await renderer.end_output(ids[0])
        raise
    with anyio.CancelScope(shield=True):
        failed = await renderer.end_output(session_id)
    return session_id, result, status if failed is None else failed


async def _run_command(
    opts: Options,
    renderer: Renderer,
    task: str,
    ids: list[str],
    *,
    engine: Engine | None,
    session_id: str | None,
    resume: ResumeDecision | None,
) -> tuple[str, AgentResult | None, int]:
    """`run_command`'s run; `ids[0]` names the session as soon as there is one."""
    async with cli_app(opts, renderer, engine, json_header=opts.json_mode) as app:
        started = time.monotonic()
        if session_id is None:  # created first, so the turn's record (`/undo`) names it
            session_id = app.new_session(task, opts.agent)
        ids[0] = session_id
        turns, state_dir = edits.Turns(), app.home / "state" / session_id
        turns.begin(state_dir)
        session_id, result = await run_turn(
            app, renderer, task, session_id, opts.agent, resume=resume
        )
        try:
            turns.end(app.store, session_id, state_dir)  # a turn of its session, as interactively
        except SessionStoreError as exc:
            renderer.notice(f"this run's file changes were not recorded for undo: {exc}")
        status = 130
        if result is not None:
            name = resume.run.agent if resume is not None and resume.run is not None else None
            agent = app.agent(name or opts.agent or app.config.agent.default)
            answers = agent.reply_is_answer
            status = outcome.exit_status(
                result, reply_is_answer=answers, fail_on_no_submit=opts.fail_on_no_submit
            )
            totals = app.ledger.snapshot().session
            elapsed = time.monotonic() - started
            summary = outcome.summary(result, status, elapsed, totals)
            renderer.final(session_id, result, summary, reply_is_answer=answers)
        if isinstance(engine, ReplayEngine):
            report_divergences(renderer, engine)
        stop_if_full(app, session_id)
        if not opts.json_mode and (line := resume_line(result, session_id)):
            sys.stderr.write(line + "\n")
        return session_id, result, status
