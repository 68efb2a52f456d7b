"""What every command shares about the person at the terminal: the yagent home, the question
function for approvals, and the interactive session's entry.

Contract: `home_dir()` is `$YAGENT_HOME`, else `~/.yagent`. `terminal_ask()` is the function that
puts an approval question to the person — only when standard input is a terminal; None otherwise
(then nobody can be asked, and a question is refused saying so). `run_interactive` starts the
interactive session; prompt-toolkit and the app load only on that path. This module imports no
command module, so `root` and the commands all import it without a loop.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio

HOME_ENV = "YAGENT_HOME"


def home_dir() -> Path:
    return Path(os.environ.get(HOME_ENV) or Path.home() / ".yagent")


async def _ask_tty(prompt: str) -> str:
    from prompt_toolkit import PromptSession

    return await PromptSession[str]().prompt_async(prompt)


def terminal_ask() -> Callable[[str], Awaitable[str]] | None:
    """The approval question function when a person is at the terminal, else None."""
    return _ask_tty if sys.stdin.isatty() else None


def run_interactive(opts: Any, plain: bool, **resume: Any) -> int:
    """The interactive session (prompt-toolkit is imported only on this path)."""
    from yagent.cli.repl import interactive

    plain = plain or os.environ.get("TERM") == "dumb"
    return anyio.run(lambda: interactive(opts, plain=plain, **resume))
