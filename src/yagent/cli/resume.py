"""`yagent resume [SESSION] [-y|-Y] [--json] [--replay RECORDING]`.

A parallel session (`yagent fanout`) resumes task by task: a task with a recorded receipt is kept,
an interrupted one continues from its checkpoint, one that never started starts (`app.fanrun`).

Consults the pure resume decision (`app.durable.decide`) and prints it before doing anything:
- the session's latest run concluded (its end committed) ⇒ a new turn in the session: the run is
  never reopened; interactively the prompt continues the session as before;
- it was interrupted (error, cancel, pause, timeout, or the process died) ⇒ that run continues
  from its checkpoint: the same session history, its step count, its loaded tools, and the calls
  a dead process left open settled first (a side effect of unknown outcome is reported, never
  re-run); then, interactively, the prompt.
`--json` / `--replay`, or standard input that is not a terminal, run without a prompt: they
continue an interrupted run (shown as `yagent run` shows it, or as JSON lines) and exit with the
status `yagent run` gives (`cli.outcome`: 0 submitted through `agent_exit` — or the chat agent's
plain reply —, 1 nothing submitted or not done, 75 stopped by a full disk, 130 stopped); with
nothing to continue they say so and exit 0.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
import click

from yagent.app.config import load
from yagent.app.durable import Action, ResumeDecision, open_home
from yagent.app.lanemarkers import marker
from yagent.app.runtrack import continuation_task
from yagent.app.sessionstore import open_sessions
from yagent.app.workspace import locate
from yagent.cli.terminal import run_interactive, terminal_ask
from yagent.tools.yolo import Yolo


def _home() -> Path:
    return Path(os.environ.get("YAGENT_HOME") or Path.home() / ".yagent")


async def decide(home: Path, workspace: Path, session_id: str) -> ResumeDecision:
    durable = open_home(home, load(home=home, workspace=workspace))
    try:
        return await durable.decide(session_id)
    finally:
        durable.close()


@click.command()
@click.argument("session", required=False)
@click.option("-y", "yes", is_flag=True, help="YOLO: approve every authorization.")
@click.option("-Y", "full", is_flag=True, help="Full autonomy: -y, and never ask questions.")
@click.option("--json", "json_mode", is_flag=True, help="No prompt; events as JSON lines.")
@click.option(
    "--replay",
    "recording",
    type=click.Path(dir_okay=False, exists=True),
    help="No prompt; replay a recorded model side (tools run for real).",
)
def resume(
    session: str | None, yes: bool, full: bool, json_mode: bool, recording: str | None
) -> None:
    """Continue a session (default: the latest in this workspace)."""
    from yagent.cli.runner import Options, replay_engine, run_command

    home, workspace = _home(), locate(Path.cwd()).root  # the repository's root, as `run`
    url = load(home=home, workspace=workspace).store.url  # [store] url: where sessions live
    with open_sessions(home, url) as store:
        if session:
            info = store.get_session(session)
        else:
            recent = store.list_sessions(limit=1, workspace=str(workspace))
            if not recent:
                raise click.ClickException("no session to resume in this workspace")
            info = recent[0]
    where = Path(info.workspace)
    yolo = Yolo.FULL if full else Yolo.YOLO if yes else Yolo.OFF
    if info.meta.get("parallel"):
        sys.exit(_resume_parallel(info.id, info.title, where, home, yolo, json_mode, recording))
    decision = anyio.run(decide, home, where, info.id)
    click.echo(f"resuming {info.id[:12]}: {info.title}", err=json_mode)
    click.echo(decision.describe(), err=json_mode)
    carry_on = decision if decision.action is Action.CONTINUE else None
    if not (json_mode or recording) and sys.stdin.isatty():
        opts = Options(where, home, yolo)

        sys.exit(run_interactive(opts, False, session_id=info.id, resume=carry_on))
    if carry_on is None or carry_on.run is None:
        click.echo("nothing to continue: the session's last run is not interrupted", err=True)
        sys.exit(0)
    agent = carry_on.run.agent
    engine = replay_engine(Path(recording), [agent]) if recording else None
    opts = Options(where, home, yolo, json_mode, agent)
    task = continuation_task(carry_on)

    async def once() -> int:  # the status `yagent run` would give (`cli.outcome`)
        _, _, status = await run_command(
            opts,
            task,
            ask=terminal_ask(),
            engine=engine,
            session_id=info.id,
            resume=carry_on,
        )
        return status

    sys.exit(anyio.run(once))


def _resume_parallel(
    session_id: str,
    title: str,
    where: Path,
    home: Path,
    yolo: Yolo,
    json_mode: bool,
    recording: str | None,
) -> int:
    """A parallel session (`yagent fanout`): its tasks are resumed, each as the stored plan and
    its own record say (`app.fanrun`); exit 0 when every task has completed."""
    from yagent.app.fanout import FanoutError
    from yagent.cli.fanout import resume_session
    from yagent.cli.runner import Options, normalise
    from yagent.llm.replay import Recording, ReplayEngine

    click.echo(f"resuming parallel session {session_id[:12]}: {title}", err=json_mode)
    engine = None
    if recording:
        with open_sessions(home, load(home=home, workspace=where).store.url) as store:
            names = store.get_session(session_id).meta.get("parallel") or []
        markers = {str(n): marker(str(n)) for n in names}
        engine = ReplayEngine(Recording.load(recording), markers=markers, normalise=normalise)
    opts = Options(where, home, yolo, json_mode)
    ask = None if json_mode else terminal_ask()
    try:
        outcome = anyio.run(lambda: resume_session(opts, session_id, ask=ask, engine=engine))
    except FanoutError as exc:
        raise click.ClickException(f"cannot resume: {exc}") from None
    return 0 if outcome.ok else 1
