"""The root `yagent` command: global options, `run`, the interactive session, and the other
commands, each imported by name only when it is invoked (or its help is shown).

Contract:
- `LAZY` names the module and attribute of every other command; `yagent sessions` loads the
  session store, not the agents, the tools or a provider SDK. Listing the commands (the help page)
  imports their modules, which are themselves free of provider SDKs, MCP, mini-racer and the
  browser (the gate in `tests/cli/test_startup.py`).
- The runner (and with it the whole app) is imported when a task runs: `run`, or the interactive
  session. This is lazy loading of the heavy part at its one seam, not an import loop hidden in a
  function: `yagent.cli.runner` never imports this module.
- Global options (`GLOBAL`) before a command mean what they mean after it, or the command is
  refused (exit 2): never silently dropped (`_hand_down`).
- Exit codes and refusals as documented in `yagent.cli`; what stops a command is said in one
  line by `cli.refusal`.
"""

from __future__ import annotations

import importlib
import io
import os
import shlex
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NoReturn

import anyio
import click

from yagent import __version__
from yagent.app import gcpolicy
from yagent.cli import refusal, suggest
from yagent.cli.engineopt import engine_options, on_engine
from yagent.cli.taskinput import stdin_task
from yagent.cli.terminal import home_dir, run_interactive, terminal_ask


def _start(
    workspace: str | None,
    yes: bool,
    full: bool,
    json_mode: bool,
    agent: str | None,
    task: str | None,
    recording: str | None = None,
    allow_local: tuple[str, ...] = (),
    plain: bool = False,
    ci: Mapping[str, Any] | None = None,
) -> NoReturn:
    """Run TASK once (or, with none, the interactive session) and exit with its outcome;
    `ci`: `run`'s `max_turns`, `model` and `fail_on_no_submit` (`runner.Options`).

    The task runner, and with it the whole app, is imported here: its one seam.
    """
    from yagent.app.workspace import locate
    from yagent.cli import runner
    from yagent.tools.yolo import Yolo

    yolo = Yolo.FULL if full else Yolo.YOLO if yes else Yolo.OFF
    place = locate(Path(workspace or os.getcwd()))  # the repository's root, from a subfolder too
    opts = runner.Options(
        place.root,
        home_dir(),
        yolo,
        json_mode,
        agent,
        start=place.start,
        allow_local=allow_local,
        **(ci or {}),
    )
    if task is None:
        sys.exit(run_interactive(opts, plain))
    agents = ["coding", "chat", "repo", "devops", "director", "meta"]
    engine = runner.replay_engine(Path(recording), agents) if recording else None
    ask = None if opts.json_mode else terminal_ask()
    _, _, status = anyio.run(lambda: runner.run_command(opts, task, ask=ask, engine=engine))
    sys.exit(status)  # cli.outcome: 0 submitted, 1 not, 130 cancelled with Ctrl-C


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
agent_option = click.option(
    "--agent",
    help="Agent to run (coding, chat, repo, devops, browser, meta, director, or one of yours).",
)
plain_option = click.option(
    "--plain",
    is_flag=True,
    help="Plain text for screen readers: no colour, no Markdown, no status bar (also TERM=dumb).",
)
allow_local_option = click.option(
    "--allow-local",
    "allow_local",
    multiple=True,
    metavar="PORT|HOST:PORT",
    help="Let the browser and web_fetch reach this local service, for this run only "
    "(PORT: loopback; see [network] allow_local).",
)


# Every command but `run`: name → (module, attribute), imported when the command is looked up.
LAZY = {
    "batch": ("yagent.cli.batch", "batch"),
    "doctor": ("yagent.cli.doctor", "doctor"),
    "fanout": ("yagent.cli.fanout", "fanout"),
    "mcp": ("yagent.cli.mcpcmd", "mcp"),
    "memory": ("yagent.cli.memory", "memory"),
    "reconcile": ("yagent.cli.reconcile", "reconcile"),
    "replay": ("yagent.cli.commands", "replay"),
    "resume": ("yagent.cli.resume", "resume"),
    "rules": ("yagent.cli.rulescmd", "rules"),
    "sessions": ("yagent.cli.commands", "sessions"),
    "trace": ("yagent.cli.trace", "trace"),
    "trust": ("yagent.cli.trust", "trust_command"),
    "undo": ("yagent.cli.undocmd", "undo"),
    "worker": ("yagent.cli.worker", "worker"),
}


class LazyGroup(suggest.Group):
    """A click group whose commands in `LAZY` are imported when looked up (click's documented
    pattern for lazily loaded subcommands); an unknown command most likely was a task."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted([*super().list_commands(ctx), *LAZY])

    def otherwise(self, args: list[str]) -> str:
        return (  # `yagent fix the test`: a task given without `run`
            f"to run a task: yagent run {quoted(' '.join(args))} "
            "(or `yagent` alone for an interactive session)"
        )

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        name, command, rest = super().resolve_command(ctx, args)
        if name is not None and command is not None:
            _hand_down(ctx, name, command, rest)
        return name, command, rest

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in LAZY:
            return super().get_command(ctx, cmd_name)
        module, attribute = LAZY[cmd_name]
        command = getattr(importlib.import_module(module), attribute)
        if not isinstance(command, click.Command):
            raise TypeError(f"{module}.{attribute} is not a click command")
        # The command is imported: its start-up is over, whether or not it opens an app later
        # (`run` and the interactive session end the hold when their app is open).
        gcpolicy.release()
        return command


def quoted(text: str) -> str:
    """`text` as one shell word, in double quotes when that needs no escaping."""
    return f'"{text}"' if not set(text) & set('"$`\\!') else shlex.quote(text)


# The group's options, by parameter name, as the person types them.
GLOBAL = {
    "workspace": "-C",
    "yes": "-y",
    "full": "-Y",
    "agent": "--agent",
    "allow_local": "--allow-local",
    "plain": "--plain",
}


def _hand_down(ctx: click.Context, name: str, command: click.Command, rest: list[str]) -> None:
    """Global options given before COMMAND mean what they mean after it: each becomes the
    default of COMMAND's option of the same name. Refused (a usage error) when COMMAND has no
    such option (`-C` excepted: COMMAND then runs in DIR, as `git -C` does) or is given a
    different value on both sides."""
    given = {
        key: ctx.params[key]
        for key in GLOBAL
        if ctx.get_parameter_source(key) is click.core.ParameterSource.COMMANDLINE
    }
    if not given or ctx.resilient_parsing:
        return
    own = {param.name for param in command.params}
    after = command.make_context(name, list(rest), parent=ctx, resilient_parsing=True)
    defaults: dict[str, object] = {}
    for key, value in given.items():
        flag = GLOBAL[key]
        if key not in own:
            if key != "workspace":
                raise click.UsageError(f"{flag} has no meaning for `yagent {name}`")
            os.chdir(str(value))
            continue
        source = after.get_parameter_source(key)
        if source is click.core.ParameterSource.COMMANDLINE and after.params[key] != value:
            raise click.UsageError(
                f"{flag} given before and after `{name}` with different values: give it once"
            )
        defaults[key] = value
    ctx.default_map = {**(ctx.default_map or {}), name: defaults}


@click.group(
    cls=LazyGroup,
    invoke_without_command=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.version_option(__version__, prog_name="yagent")
@workspace_option
@yes_option
@full_option
@agent_option
@allow_local_option
@plain_option
@click.pass_context
def cli(
    ctx: click.Context,
    workspace: str | None,
    yes: bool,
    full: bool,
    agent: str | None,
    allow_local: tuple[str, ...],
    plain: bool,
) -> None:
    """yagent: a multi-agent coding agent for the terminal.

    Without a COMMAND: an interactive session in this directory (/help lists its commands and
    keys); piped input is one task, run once. `yagent run TASK` runs one task and exits.
    """
    home = home_dir()
    if home.exists() and not home.is_dir():  # else every file in it fails as "Not a directory"
        raise click.UsageError(
            f"the yagent home {home} (YAGENT_HOME) is not a directory: point YAGENT_HOME at a "
            "directory (a missing one is created)"
        )
    if ctx.invoked_subcommand is None:
        # `yagent < task.txt`: the task is the input, run once; on a terminal, the session
        task = None if sys.stdin.isatty() else stdin_task()
        _start(workspace, yes, full, False, agent, task, allow_local=allow_local, plain=plain)


@cli.command()
@click.argument("task", nargs=-1, metavar="[TASK]")
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
@allow_local_option
@click.option(
    "--max-turns",
    type=click.IntRange(min=1),
    help="At most N model calls for the agent (the run ends as max_steps, exit 1).",
)
@click.option(
    "--model",
    callback=lambda _c, _p, value: _named(value),
    help="Ask this model ([llm] model for this run; an agent's own model still wins).",
)
@click.option(
    "--fail-on-no-submit",
    is_flag=True,
    help="Exit 1 unless the agent submitted through agent_exit (a chat reply too).",
)
@engine_options
def run(
    task: tuple[str, ...],
    workspace: str | None,
    yes: bool,
    full: bool,
    agent: str | None,
    json_mode: bool,
    recording: str | None,
    allow_local: tuple[str, ...],
    max_turns: int | None,
    model: str | None,
    fail_on_no_submit: bool,
    **engine: Any,
) -> None:
    """Run one TASK and exit (TASK `-`, or none with input that is not a terminal: read it
    from standard input)."""
    if len(task) > 1:  # the words of an unquoted task
        raise click.UsageError(
            f"TASK is one argument: quote it: yagent run {quoted(' '.join(task))}"
        )
    text = task[0] if task else None
    if text == "-" or (text is None and not sys.stdin.isatty()):
        text = stdin_task()
    elif text is None:
        raise click.UsageError("missing TASK (or pipe it on standard input)")
    elif not text.strip():
        raise click.UsageError("no task: TASK is empty")
    ci = {"max_turns": max_turns, "model": model, "fail_on_no_submit": fail_on_no_submit}
    where = Path(workspace or os.getcwd()).resolve()
    on_engine(
        "run",
        engine,
        home_dir(),
        where,
        lambda: _start(workspace, yes, full, json_mode, agent, text, recording, allow_local, ci=ci),
    )


def _named(value: str | None) -> str | None:
    if value is not None and not value.strip():
        raise click.BadParameter("a model name, not empty")
    return value


def main(argv: Sequence[str] | None = None) -> int:
    try:
        cli.main(
            args=list(argv) if argv is not None else None, prog_name="yagent", standalone_mode=False
        )
    except click.exceptions.Exit as exc:
        return int(exc.exit_code or 0)
    except click.ClickException as exc:
        from yagent.cli.safetext import visible  # errors quote names from untrusted files

        said = io.StringIO()
        exc.show(file=said)
        sys.stderr.write(visible(said.getvalue()))
        return 2
    except click.exceptions.Abort:
        return 130
    except BaseExceptionGroup as group:  # a refusal raised inside a task group: said the same
        known, rest = group.split(lambda e: refusal.status(e) is not None)
        if known is None or rest is not None:
            raise
        leaves = refusal.leaves(known)
        for line in dict.fromkeys(refusal.line(exc) for exc in leaves):
            refusal.say(line)
        return max(code for exc in leaves if (code := refusal.status(exc)) is not None)
    except Exception as exc:  # after the groups: an ExceptionGroup is an Exception too
        code = refusal.status(exc)
        if code is None:
            raise
        refusal.say(refusal.line(exc))
        return code
    except SystemExit as exc:
        return int(exc.code or 0) if not isinstance(exc.code, str) else 1
    return 0
