"""The command's async flows: one-shot runs, the interactive session, replay.

Ctrl-C: the first cancels the running turn (its tools are cancelled and accounted for, the session
keeps what happened); a second one kills every live foreground process group and exits at once
(status 130) — the only way out when a tool ignores cancellation.
"""

from __future__ import annotations

import json
import os
import re
import signal
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import anyio

from yagent.agents import catalog
from yagent.agents.results import AgentResult
from yagent.app.assemble import App, open_app
from yagent.app.config import load
from yagent.cli.render import Ask, Renderer
from yagent.llm.replay import Recording, ReplayEngine
from yagent.llm.types import Engine
from yagent.tools.guard import Yolo
from yagent.tools.shell import kill_live_process_groups


@dataclass(frozen=True, slots=True)
class Options:
    workspace: Path
    home: Path
    yolo: Yolo = Yolo.OFF
    json_mode: bool = False
    agent: str | None = None


_VOLATILE = (
    (re.compile(r'"duration": [0-9.eE+-]+'), '"duration": <t>'),
    (re.compile(r"\bin [0-9.]+s\b"), "in <t>s"),
    (re.compile(r"/tmp/[^\s\"']+"), "<tmp>"),
)


def normalise(text: str) -> str:
    """Tool output with timings and temp paths masked, so replays compare what matters."""
    for pattern, replacement in _VOLATILE:
        text = pattern.sub(replacement, text)
    return text


def replay_engine(path: Path, agent_names: list[str]) -> ReplayEngine:
    markers = {name: catalog.builtin(name, 0).marker for name in agent_names}
    return ReplayEngine(Recording.load(path), markers=markers, normalise=normalise)


async def _interrupts(on_first: Callable[[], None]) -> None:
    with anyio.open_signal_receiver(signal.SIGINT) as signals:
        count = 0
        async for _ in signals:
            count += 1
            if count == 1:
                on_first()
            else:
                killed = kill_live_process_groups()
                sys.stderr.write(f"\nyagent: killed {killed} live process group(s); exiting\n")
                os._exit(130)


async def run_turn(
    app: App, renderer: Renderer, task: str, session_id: str | None, agent: str | None
) -> tuple[str, AgentResult | None]:
    """One task in `app`; None as result when the person cancelled it with Ctrl-C."""
    outcome: list[tuple[str, AgentResult]] = []
    async with anyio.create_task_group() as tg:
        tg.start_soon(renderer.pump, app)
        turn = anyio.CancelScope()
        tg.start_soon(_interrupts, turn.cancel)
        with turn:
            outcome.append(await app.run(task, agent_name=agent, session_id=session_id))
        tg.cancel_scope.cancel()
    while (event := app.dispatcher.receive_nowait()) is not None:
        renderer.show(event)  # what was published after the pump stopped
    if not outcome:
        return session_id or "", None
    return outcome[0]


async def run_once(
    opts: Options, task: str, *, ask: Ask | None, engine: Engine | None = None
) -> tuple[str, AgentResult | None]:
    config = load(home=opts.home, workspace=opts.workspace)
    renderer = Renderer(json_mode=opts.json_mode, ask=ask)
    async with open_app(
        config,
        home=opts.home,
        workspace=opts.workspace,
        yolo=opts.yolo,
        interactive=True,
        engine=engine,
    ) as app:
        for server, problem in app.mcp.problems:
            renderer.console.print(f"[yellow]MCP server {server} unavailable: {problem}[/]")
        session_id, result = await run_turn(app, renderer, task, None, opts.agent)
        if result is not None:
            renderer.final(session_id, result)
        if isinstance(engine, ReplayEngine):
            report_divergences(renderer, engine)
        return session_id, result


def report_divergences(renderer: Renderer, engine: ReplayEngine) -> None:
    if renderer.json_mode:
        line = {
            "type": "replay",
            "divergences": [
                {
                    "identity": d.identity,
                    "step": d.step,
                    "call_id": d.call_id,
                    "tool": d.tool,
                    "expected": d.expected,
                    "actual": d.actual,
                }
                for d in engine.divergences
            ],
            "unverified": [list(u) for u in engine.unverified()],
        }
        renderer.out.write(json.dumps(line, ensure_ascii=False) + "\n")
        return
    for d in engine.divergences:
        renderer.console.print(
            f"[yellow]divergence[/] {d.identity} step {d.step} {d.tool} ({d.call_id}): "
            f"recorded {(d.expected or '')[:80]!r}, got {(d.actual or '')[:80]!r}"
        )
    unverified = engine.unverified()
    if unverified:
        renderer.console.print(f"[dim]{len(unverified)} recorded step(s) never compared[/]")
    if not engine.divergences:
        renderer.console.print("[green]replay matched the recording[/]")


async def interactive(
    opts: Options,
    *,
    ask: Ask,
    read_task: Callable[[], Awaitable[str | None]],
    session_id: str | None = None,
) -> int:
    """The REPL: each line is a task continuing the same session; an empty read ends it."""
    config = load(home=opts.home, workspace=opts.workspace)
    renderer = Renderer(json_mode=False, ask=ask)
    async with open_app(
        config, home=opts.home, workspace=opts.workspace, yolo=opts.yolo, interactive=True
    ) as app:
        renderer.console.print(
            f"[bold]yagent[/] in {opts.workspace} · model {app.engine.model} · "
            "Ctrl-C cancels a turn, twice exits, Ctrl-D quits"
        )
        while True:
            task = await read_task()
            if task is None:
                return 0
            if not task.strip():
                continue
            session_id, result = await run_turn(app, renderer, task, session_id, opts.agent)
            if result is None:
                renderer.console.print("[yellow]turn cancelled[/]")
            else:
                renderer.final(session_id, result)
