"""`yagent sessions` (and `sessions show`) and `replay`: the sessions a run wrote, by the store
`[store] url` chooses. `resume` is `cli.resume`, `doctor` is `cli.doctor`."""

from __future__ import annotations

import datetime
import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from yagent.app.lanemarkers import marker
from yagent.app.recording import markers, parallel_recording, recording_of
from yagent.app.sessionstore import sessions_here
from yagent.app.workspace import locate
from yagent.cli import suggest
from yagent.cli.safetext import visible
from yagent.cli.terminal import terminal_ask
from yagent.llm.replay import Recording, ReplayEngine
from yagent.tools.yolo import Yolo


def _home() -> Path:
    return Path(os.environ.get("YAGENT_HOME") or Path.home() / ".yagent")


def _when(ts: float) -> str:
    return datetime.datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M")


class _Sessions(suggest.Group):
    def otherwise(self, args: list[str]) -> str:
        return f"to show a session: yagent sessions show {args[0]}"  # `yagent sessions ID`


@click.group(cls=_Sessions, invoke_without_command=True)
@click.option("--all", "show_all", is_flag=True, help="Sessions of every workspace.")
@click.option("--limit", default=20, show_default=True)
@click.pass_context
def sessions(ctx: click.Context, show_all: bool, limit: int) -> None:
    """List sessions (newest first)."""
    if ctx.invoked_subcommand is not None:
        return
    # the repository's root from a subfolder too: where `run` stores its sessions
    workspace = None if show_all else str(locate(Path.cwd()).root)
    with sessions_here(_home()) as store:
        rows = store.list_sessions(limit=limit, workspace=workspace)
    table = Table("id", "updated", "status", "title", "workspace")
    for info in rows:
        plain = (Text(info.status), Text(visible(info.title)), Text(visible(info.workspace)))
        table.add_row(info.id[:12], _when(info.updated_at), *plain)
    Console().print(table if rows else "no sessions yet" + ("" if show_all else " here (--all?)"))


@sessions.command("show")
@click.argument("session")
@click.option("--json", "json_mode", is_flag=True)
def show(session: str, json_mode: bool) -> None:
    """Show one session: messages, tool calls, usage."""
    with sessions_here(_home()) as store:
        info = store.get_session(session)
        data = store.export_session(info.id)
    if json_mode:
        click.echo(json.dumps(data, ensure_ascii=False, default=str, indent=2))
        return
    console = Console()
    rest = f" · {info.status} · {info.workspace} · {info.id}"
    console.print(f"[bold]{escape(visible(info.title))}[/]{escape(visible(rest))}")
    for m in data.get("messages", []):  # stored text is untrusted: never markup, never controls
        body = visible(str(m.get("content", ""))[:300])
        calls = ", ".join(visible(c["name"]) for c in m.get("tool_calls", []) or [])
        shown = f"{body} → {calls}" if calls else body
        console.print(f"[cyan]{m.get('role')}[/] {escape(shown)}")
    usage = data.get("usage", {})
    console.print(f"[dim]usage: {json.dumps(usage, default=str)}[/]")


@click.command()
@click.argument("session")
@click.option("--save", type=click.Path(dir_okay=False), help="Write the recording to a file.")
@click.option("-y", "yes", is_flag=True)
def replay(session: str, save: str | None, yes: bool) -> None:
    """Replay SESSION's model side against this workspace, tools run for real."""
    from yagent.agents import catalog
    from yagent.cli.runner import Options, run_once

    with sessions_here(_home()) as store:
        sid = store.get_session(session).id
        parallel = parallel_recording(store, sid)
        recording, task, agent = recording_of(store, sid)
    if parallel is not None:
        sys.exit(_replay_parallel(parallel[0], parallel[1], save, yes))
    if save:
        _save(recording, save)
        click.echo(f"recording written to {save}")
        return
    marked = markers(recording, agent, catalog.builtin(agent, 0).marker)
    engine = ReplayEngine(recording, markers=marked)
    opts = Options(locate(Path.cwd()).root, _home(), Yolo.YOLO if yes else Yolo.OFF, agent=agent)
    _, result = anyio.run(lambda: run_once(opts, task, ask=terminal_ask(), engine=engine))
    sys.exit(0 if result is not None and not engine.divergences else 1)


def _save(recording: Recording, path: str) -> None:
    """`--save`: a FILE that cannot be written is a usage error (exit 2), not a traceback."""
    try:
        recording.save(path)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise click.BadParameter(f"cannot write {path}: {reason}", param_hint="'--save'") from exc


def _replay_parallel(recording: Recording, plan: list[Any], save: str | None, yes: bool) -> int:
    """A parallel session: saved per task, or its stored plan run again against the replay."""
    from yagent.app.fanout import FanoutError
    from yagent.app.fanrun import assignment_of
    from yagent.cli.fanout import run_plan
    from yagent.cli.runner import Options, normalise

    if save:
        _save(recording, save)
        click.echo(f"recording written to {save} (one identity per task)")
        return 0
    try:
        assignments = [assignment_of(raw) for raw in plan]
    except TypeError as exc:
        raise click.ClickException(f"the session's stored plan is unreadable: {exc}") from None
    markers = {a.name: marker(a.name) for a in assignments}
    engine = ReplayEngine(recording, markers=markers, normalise=normalise)
    opts = Options(locate(Path.cwd()).root, _home(), Yolo.YOLO if yes else Yolo.OFF)
    try:
        outcome = anyio.run(lambda: run_plan(opts, assignments, ask=terminal_ask(), engine=engine))
    except FanoutError as exc:
        raise click.ClickException(f"parallel plan refused: {exc}") from None
    return 0 if outcome.ok and not engine.divergences else 1
