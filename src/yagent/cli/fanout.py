"""`yagent fanout PLAN.toml [-C DIR] [--json] [-y] [--replay REC] [--max-parallel N] [--check]`.

Runs the plan's tasks as parallel sub-agents, each confined to the worktree it declares
(`app.fanout`). A plan is TOML: one `[[task]]` table per task with `name`, `task`, either `agent`
or `capabilities`, and `write` / `read` lists of workspace-relative paths; any other key is an
error. A plan that does not hold — unreadable, an unknown key, conflicting or invalid
declarations, an unknown agent, a preset that runs commands on the host — exits 2 with the reason
before any session exists. Otherwise one line per task says how it ended (`--json`: the events,
one `receipt` line per task and a closing `fanout` line); exit 0 when every task completed, 1
otherwise. Ctrl-C asks every task to stop at its next step; a second one kills and exits (130).
`--check` makes every check and shows the plan (who runs what where, which areas would be
created) without running, creating or asking a model anything. Started in a subfolder of a
repository (or `-C` one), it works on the repository's root as `run` does (`app.workspace`): the
plan's paths are relative to that root, and its session belongs to the repository.
"""

from __future__ import annotations

import json
import os
import sys
import tomllib
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

import anyio
import click
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from yagent.app.assemble import App
from yagent.app.fanout import Assignment, FanoutError, ParallelRun, prepare
from yagent.app.fanrun import resume_parallel, resume_plan
from yagent.app.lanemarkers import marker
from yagent.app.workspace import locate
from yagent.cli import lineout
from yagent.cli.engineopt import engine_options, on_engine
from yagent.cli.render import Ask, Renderer
from yagent.cli.runend import report_divergences
from yagent.cli.runner import (
    Options,
    _interrupts,
    cli_app,
    normalise,
)
from yagent.cli.safetext import json_line
from yagent.cli.terminal import home_dir, terminal_ask
from yagent.llm.replay import Recording, ReplayEngine
from yagent.llm.scripted import ScriptedEngine
from yagent.llm.types import Engine
from yagent.tools.areastage import describe
from yagent.tools.yolo import Yolo


class _Task(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    task: str
    agent: str = ""
    capabilities: list[str] = Field(default_factory=list)
    write: list[str] = Field(default_factory=list)
    read: list[str] = Field(default_factory=list)


class _Plan(BaseModel):
    model_config = ConfigDict(extra="forbid")
    task: list[_Task] = Field(min_length=1)


def load_plan(path: Path) -> list[Assignment]:
    """The plan's assignments; `click.UsageError` (exit 2) naming the problem otherwise."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        plan = _Plan.model_validate(data)
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise click.UsageError(f"cannot read the plan {path}: {exc}") from None
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise click.UsageError(f"invalid plan {path}: {problems}") from None
    return [
        Assignment(t.name, t.task, t.agent, tuple(t.capabilities), tuple(t.write), tuple(t.read))
        for t in plan.task
    ]


async def run_plan(
    opts: Options,
    assignments: Sequence[Assignment],
    *,
    ask: Ask | None,
    engine: Engine | None = None,
    max_parallel: int | None = None,
) -> ParallelRun:
    async def start(app: App, renderer: Renderer) -> Callable[[], Awaitable[ParallelRun]]:
        plan = await prepare(app, assignments, max_parallel=max_parallel)  # before any session
        return lambda: app.run_parallel(plan)

    return await _with_app(opts, ask, engine, start)


async def resume_session(
    opts: Options, session_id: str, *, ask: Ask | None, engine: Engine | None = None
) -> ParallelRun:
    """Resume a parallel session: say what happens to each task, then do it (`app.fanrun`)."""

    async def start(app: App, renderer: Renderer) -> Callable[[], Awaitable[ParallelRun]]:
        work = await resume_plan(app, session_id)
        for line in work.lines:
            renderer.notice(f"resume: {line}")
        return lambda: resume_parallel(app, work)

    return await _with_app(opts, ask, engine, start)


Starter = Callable[[App, Renderer], Awaitable[Callable[[], Awaitable[ParallelRun]]]]


async def _with_app(
    opts: Options, ask: Ask | None, engine: Engine | None, start: Starter
) -> ParallelRun:
    renderer = Renderer(json_mode=opts.json_mode, ask=ask, out=lineout.display(opts.json_mode))
    try:
        outcome = await _run(opts, renderer, engine, start)
    except BaseException:
        with anyio.CancelScope(shield=True):  # the exit already on its way is kept
            await renderer.end_output("")
        raise
    with anyio.CancelScope(shield=True):
        failed = await renderer.end_output(outcome.session_id)  # --json: `cli.lineout.end`
    if failed is not None:
        raise SystemExit(failed)
    return outcome


async def _run(
    opts: Options, renderer: Renderer, engine: Engine | None, start: Starter
) -> ParallelRun:
    async with cli_app(opts, renderer, engine) as app:
        go = await start(app, renderer)

        async def reader_gone() -> None:  # the --json reader went away: stop as on Ctrl-C
            await renderer.reader_gone()
            renderer.stopped_for_reader = True
            app.pause.abandon()

        async with anyio.create_task_group() as tg:
            tg.start_soon(renderer.pump, app)
            tg.start_soon(_interrupts, lambda _: app.pause.abandon())
            tg.start_soon(reader_gone)
            outcome = await go()
            tg.cancel_scope.cancel()
        while (event := app.dispatcher.next_in_order()) is not None:
            renderer.show(event)  # what was published after the pump stopped
        summary(renderer, outcome)
        if isinstance(engine, ReplayEngine):
            report_divergences(renderer, engine)
        return outcome


async def check_plan(
    opts: Options, assignments: Sequence[Assignment], max_parallel: int | None
) -> None:
    """Every check `fanout` makes before it starts, and what it would start; nothing runs, no
    session is created, no area created, no model asked (the engine below is never called)."""
    renderer = Renderer(json_mode=opts.json_mode, ask=None)
    try:
        await _check(opts, renderer, assignments, max_parallel)
    finally:
        with anyio.CancelScope(shield=True):
            failed = await renderer.end_output("")
    if failed is not None:
        raise SystemExit(failed)


async def _check(
    opts: Options, renderer: Renderer, assignments: Sequence[Assignment], max_parallel: int | None
) -> None:
    async with cli_app(opts, renderer, ScriptedEngine({}), interactive=False) as app:
        plan = await prepare(app, assignments, max_parallel=max_parallel, dry_run=True)
        tasks = [
            {
                "name": t.assignment.name,
                "agent": t.executor.name,
                "areas": describe(t.declaration),
                "task": t.assignment.task,
            }
            for t in plan.tasks
        ]
        if renderer.json_mode:
            line = {
                "type": "plan",
                "ok": True,
                "preset": app.safety.preset.name,
                "max_parallel": plan.max_parallel,
                "tasks": tasks,
                "created": list(plan.created),
            }
            renderer.out.write(json_line(line) + "\n")
            return
        out = renderer.console
        out.print(
            f"plan holds: {len(tasks)} task(s), at most {plan.max_parallel} at once, "
            f"preset {app.safety.preset.name}",
            markup=False,
        )
        for t in tasks:
            out.print(f"  {t['name']} → {t['agent']}: {t['areas']}", markup=False)
        if plan.created:
            out.print(f"  would create: {', '.join(plan.created)}", markup=False)


def summary(renderer: Renderer, outcome: ParallelRun) -> None:
    if renderer.json_mode:
        for task in outcome.tasks:
            line = {"type": "receipt", "session_id": outcome.session_id, **task.to_dict()}
            renderer.out.write(json_line(line) + "\n")
        end = {"type": "fanout", "session_id": outcome.session_id, "ok": outcome.ok}
        renderer.out.write(json.dumps(end) + "\n")
        return
    for task in outcome.tasks:
        r = task.receipt
        mark = "[green]✓[/]" if r.ok else "[red]✗[/]"
        detail = r.output if r.ok else r.reason
        first = detail.strip().splitlines()[0][:160] if detail.strip() else ""
        renderer.console.print(
            f"{mark} {task.name} ({r.executor or 'no agent'}, {task.delegation_id}): "
            f"{r.status.value}" + (f" — {first}" if first else "")
        )
    done, total = sum(t.receipt.ok for t in outcome.tasks), len(outcome.tasks)
    sid = outcome.session_id[:12]
    renderer.console.print(f"[dim]{done} of {total} tasks completed · session {sid}[/]")


@click.command()
@click.argument("plan", type=click.Path(dir_okay=False, exists=True))
@click.option(
    "--workspace",
    "-C",
    type=click.Path(file_okay=False, exists=True),
    help="Work in this directory.",
)
@click.option("-y", "yes", is_flag=True, help="YOLO: approve every authorization.")
@click.option("--json", "json_mode", is_flag=True, help="Print events as JSON lines (for CI).")
@click.option(
    "--replay",
    "recording",
    type=click.Path(dir_okay=False, exists=True),
    help="Replay a recorded model side (its agents named by the plan's task names).",
)
@click.option(
    "--max-parallel",
    type=click.IntRange(1, 64),
    help="Tasks running at once (default: [agent] max_parallel_agents).",
)
@click.option(
    "--check",
    is_flag=True,
    help="Check the plan and show who runs what where; run nothing (no model needed).",
)
@engine_options
def fanout(
    plan: str,
    workspace: str | None,
    yes: bool,
    json_mode: bool,
    recording: str | None,
    max_parallel: int | None,
    check: bool,
    **engine_opts: Any,
) -> None:
    """Run PLAN's tasks as parallel sub-agents, each confined to its declared worktree."""

    assignments = load_plan(Path(plan))
    place = locate(Path(workspace or os.getcwd()))  # the repository's root, as `run`'s
    ws = place.root
    opts = Options(ws, home_dir(), Yolo.YOLO if yes else Yolo.OFF, json_mode, start=place.start)
    if check:
        try:
            anyio.run(lambda: check_plan(opts, assignments, max_parallel))
        except FanoutError as exc:
            raise click.ClickException(f"parallel plan refused: {exc}") from None
        return
    engine = None
    if recording:
        markers = {a.name: marker(a.name) for a in assignments}
        engine = ReplayEngine(Recording.load(recording), markers=markers, normalise=normalise)
    ask = None if json_mode else terminal_ask()

    def start() -> NoReturn:
        try:
            outcome = anyio.run(
                lambda: run_plan(
                    opts, assignments, ask=ask, engine=engine, max_parallel=max_parallel
                )
            )
        except FanoutError as exc:
            raise click.ClickException(f"parallel plan refused: {exc}") from None
        sys.exit(0 if outcome.ok else 1)

    on_engine("fanout", engine_opts, opts.home, ws, start)
