"""The `yagent` command.

    yagent [--plain]            interactive session in the current directory (docs/usage.md:
                                keys, /commands; --plain or TERM=dumb: plain text, no colour)
    yagent run "task" [-y|-Y] [--json] [--agent NAME]   (task `-` or piped: read from stdin)
    yagent fanout PLAN.toml [-y] [--json] [--max-parallel N]   parallel sub-agents, each
                                confined to the worktree it declares (exit 2: plan refused)
    yagent sessions [show ID]   list sessions / show one
    yagent resume [ID] [--json|--replay REC]   continue a session (the latest here by default):
                                an interrupted run from its checkpoint, else a new turn
    yagent replay SESSION       replay a recorded session's model side with real tools
    yagent doctor               check provider, rg, chromium, bwrap, settings
    yagent reconcile [SESSION] [--applied|--not-applied KEY]   side effects of unknown outcome
    yagent trace SESSION [--html [FILE]]   rows per turn, or a self-contained HTML timeline
    yagent memory add TEXT [--global] | list   memories injected into every agent's context
    yagent trust [-C DIR] [--show|--revoke] [--yes]   review and trust the workspace's own
                                .yagent/ files (until then their loosening keys are withheld)

Exit status: 0 done, 1 the run did not finish (error, timeout, cancelled, nothing submitted),
2 usage or configuration error, or the session is already running in another yagent process
(the message says what to fix).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio
import click

from yagent import __version__
from yagent.app.config import ConfigError
from yagent.app.lease import SessionBusyError
from yagent.cli import commands
from yagent.cli.fanout import fanout
from yagent.cli.memory import memory
from yagent.cli.reconcile import reconcile
from yagent.cli.runner import Options, replay_engine, run_once
from yagent.cli.trace import trace
from yagent.cli.trust import trust_command
from yagent.kernel.sqlitefile import UnusableFileError
from yagent.memory import DamagedStoreError, SessionStoreError
from yagent.tools.guard import Yolo

HOME_ENV = "YAGENT_HOME"


def home_dir() -> Path:
    return Path(os.environ.get(HOME_ENV) or Path.home() / ".yagent")


def _options(
    workspace: str | None, yes: bool, full: bool, json_mode: bool, agent: str | None
) -> Options:
    yolo = Yolo.FULL if full else Yolo.YOLO if yes else Yolo.OFF
    ws = Path(workspace or os.getcwd()).resolve()
    return Options(ws, home_dir(), yolo, json_mode, agent)


async def _ask_tty(prompt: str) -> str:
    from prompt_toolkit import PromptSession

    return await PromptSession[str]().prompt_async(prompt)


def _ask() -> object:
    return _ask_tty if sys.stdin.isatty() else None


def _interactive(opts: Options, plain: bool, **resume: Any) -> int:
    """The interactive session (prompt-toolkit is imported only on this path)."""
    from yagent.cli.repl import interactive

    plain = plain or os.environ.get("TERM") == "dumb"
    return anyio.run(lambda: interactive(opts, plain=plain, **resume))


workspace_option = click.option(
    "--workspace",
    "-C",
    type=click.Path(file_okay=False, exists=True),
    help="Work in this directory instead of the current one.",
)
yes_option = click.option(
    "-y", "yes", is_flag=True, help="YOLO: approve every authorization, outside paths included."
)
full_option = click.option(
    "-Y", "full", is_flag=True, help="Full autonomy: -y, and the agent never asks questions."
)
agent_option = click.option("--agent", help="Agent to run (coding, chat, repo, devops, custom).")
plain_option = click.option(
    "--plain",
    is_flag=True,
    help="Plain text for screen readers: no colour, no Markdown, no status bar (also TERM=dumb).",
)


@click.group(invoke_without_command=True, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="yagent")
@workspace_option
@yes_option
@full_option
@agent_option
@plain_option
@click.pass_context
def cli(
    ctx: click.Context,
    workspace: str | None,
    yes: bool,
    full: bool,
    agent: str | None,
    plain: bool,
) -> None:
    """yagent: a multi-agent coding agent for the terminal."""
    if ctx.invoked_subcommand is None:
        opts = _options(workspace, yes, full, False, agent)
        if not sys.stdin.isatty():  # `yagent < task.txt`: the task is the input, run once
            _run_task(opts, _stdin_task(), None)
        ctx.exit(_interactive(opts, plain))


def _stdin_task() -> str:
    """The task read whole from standard input (`-`, or input that is not a terminal)."""
    task = sys.stdin.buffer.read().decode("utf-8", errors="replace")
    if not task.strip():
        raise click.UsageError("no task: standard input was empty")
    return task


def _run_task(opts: Options, task: str, recording: str | None) -> None:
    engine = (
        replay_engine(Path(recording), ["coding", "chat", "repo", "devops"]) if recording else None
    )
    ask = None if opts.json_mode else _ask()
    _, result = anyio.run(lambda: run_once(opts, task, ask=ask, engine=engine))  # type: ignore[arg-type]
    if result is None:
        sys.exit(130)  # cancelled with Ctrl-C
    sys.exit(0 if result.status.value in ("finished", "answered") else 1)


@cli.command()
@click.argument("task", required=False)
@workspace_option
@yes_option
@full_option
@agent_option
@click.option("--json", "json_mode", is_flag=True, help="Print events as JSON lines (for CI).")
@click.option(
    "--replay",
    "recording",
    type=click.Path(dir_okay=False, exists=True),
    help="Replay a recorded model side (tools run for real).",
)
def run(
    task: str | None,
    workspace: str | None,
    yes: bool,
    full: bool,
    agent: str | None,
    json_mode: bool,
    recording: str | None,
) -> None:
    """Run one TASK and exit (TASK `-`, or none with input that is not a terminal: read it
    from standard input)."""
    opts = _options(workspace, yes, full, json_mode, agent)
    if task == "-" or (task is None and not sys.stdin.isatty()):
        task = _stdin_task()
    elif task is None:
        raise click.UsageError("missing TASK (or pipe it on standard input)")
    _run_task(opts, task, recording)


cli.add_command(commands.sessions)
cli.add_command(fanout)
cli.add_command(commands.resume)
cli.add_command(commands.replay)
cli.add_command(commands.doctor)
cli.add_command(trace)
cli.add_command(memory)
cli.add_command(reconcile)
cli.add_command(trust_command)


def main(argv: Sequence[str] | None = None) -> int:
    try:
        cli.main(
            args=list(argv) if argv is not None else None, prog_name="yagent", standalone_mode=False
        )
    except click.exceptions.Exit as exc:
        return int(exc.exit_code or 0)
    except click.ClickException as exc:
        exc.show()
        return 2
    except click.exceptions.Abort:
        return 130
    except _REFUSALS as exc:
        click.echo(_refusal(exc), err=True)
        return 2
    except BaseExceptionGroup as group:  # a refusal raised inside a task group: said the same
        known, rest = group.split(_REFUSALS)
        if known is None or rest is not None:
            raise
        for line in dict.fromkeys(_refusal(exc) for exc in _leaves(known)):
            click.echo(line, err=True)
        return 2
    except SystemExit as exc:
        return int(exc.code or 0) if not isinstance(exc.code, str) else 1
    return 0


# What stops a command before (or instead of) doing anything, said in one line: exit 2.
_REFUSALS = (ConfigError, SessionStoreError, SessionBusyError, UnusableFileError)
_DAMAGED = (
    " — `yagent doctor` checks the stores; `yagent doctor --salvage` copies what is still "
    "readable into a new file; then move the damaged file aside"
)


def _refusal(exc: BaseException) -> str:
    advice = _DAMAGED if isinstance(exc, DamagedStoreError | UnusableFileError) else ""
    return f"yagent: {exc}{advice}"


def _leaves(group: BaseExceptionGroup[BaseException]) -> list[BaseException]:
    out: list[BaseException] = []
    for exc in group.exceptions:
        out.extend(_leaves(exc) if isinstance(exc, BaseExceptionGroup) else [exc])
    return out


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
