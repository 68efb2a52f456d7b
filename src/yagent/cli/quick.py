"""`yagent --version` and `yagent --help`, answered without loading click or the app.

Contract:
- `answer(args)` returns the text to print when `args` is exactly `--version`, or exactly
  `--help` / `-h` on a terminal at least `WIDTH` columns wide (or not a terminal): the width at
  which click renders `HELP`. Anything else — more arguments, a narrower terminal — returns None
  and click answers, as it does for every other command.
- `HELP` is click's own rendering of `yagent.cli.root.cli` at that width, kept as text:
  `tests/cli/test_startup.py` compares the two, so a command or option added without updating
  this page fails there (paste the rendering the test prints).
"""

from __future__ import annotations

import os
import sys

from yagent import __version__

WIDTH = 80  # click's default max_content_width: its page is this wide on any wider terminal

VERSION = f"yagent, version {__version__}\n"

HELP = """\
Usage: yagent [OPTIONS] [COMMAND] [ARGS]...

  yagent: a multi-agent coding agent for the terminal.

  Without a COMMAND: an interactive session in this directory (/help lists its
  commands and keys); piped input is one task, run once. `yagent run TASK`
  runs one task and exits.

Options:
  --version                     Show the version and exit.
  -C, --workspace DIRECTORY     Work in this directory instead of the current
                                one.
  -y                            YOLO: approve every authorization, outside
                                paths included.
  -Y                            Full autonomy: -y, and the agent never asks
                                questions.
  --agent TEXT                  Agent to run (coding, chat, repo, devops,
                                browser, meta, director, or one of yours).
  --allow-local PORT|HOST:PORT  Let the browser and web_fetch reach this local
                                service, for this run only (PORT: loopback;
                                see [network] allow_local).
  --plain                       Plain text for screen readers: no colour, no
                                Markdown, no status bar (also TERM=dumb).
  -h, --help                    Show this message and exit.

Commands:
  batch      Run many tasks, each in its own checkout; status, results,...
  doctor     Check that yagent can work here.
  fanout     Run PLAN's tasks as parallel sub-agents, each confined to...
  mcp        Add, list, remove and import MCP servers.
  memory     Project and user memories injected into every agent's context.
  reconcile  List side effects of unknown outcome, or record what you...
  replay     Replay SESSION's model side against this workspace, tools...
  resume     Continue a session (default: the latest in this workspace).
  rules      Import command and read rules from Claude Code and Codex CLI.
  run        Run one TASK and exit (TASK `-`, or none with input that is...
  sessions   List sessions (newest first).
  trace      Show a session's trace (rows per turn), or write an HTML...
  trust      Review and trust this workspace's own .yagent/ files (or...
  undo       Revert the last turn's file changes of SESSION (default: the...
  worker     Run batch tasks for a Temporal server until stopped.
"""


def answer(args: list[str]) -> str | None:
    if args == ["--version"]:
        return VERSION
    if args in (["--help"], ["-h"]) and columns() >= WIDTH:
        return HELP
    return None


def columns() -> int:
    """The terminal width as `shutil.get_terminal_size` (which click uses) reports it: `COLUMNS`
    when set to a positive number, else standard output's terminal, else 80. Computed here
    because importing shutil alone costs about what starting Python does."""
    try:
        wanted = int(os.environ.get("COLUMNS", ""))
    except ValueError:
        wanted = 0
    if wanted > 0:
        return wanted
    out = sys.__stdout__
    try:
        return (os.get_terminal_size(out.fileno()).columns if out else 0) or 80
    except (AttributeError, ValueError, OSError):
        return 80
