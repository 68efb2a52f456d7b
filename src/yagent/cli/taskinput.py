"""The task given on standard input (`yagent run -`, or input that is not a terminal).

Contract: `stdin_task()` reads standard input whole and returns it as text only when it is UTF-8
and not blank; otherwise a `click.UsageError` (exit 2) names the first byte that is not UTF-8 and
its offset, or says the input was empty — never a task with characters silently replaced.
"""

from __future__ import annotations

import sys

import click


def stdin_task() -> str:
    """The task read whole from standard input (`-`, or input that is not a terminal): UTF-8
    text, never passed on with characters silently replaced."""
    data = sys.stdin.buffer.read()
    try:
        task = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise click.UsageError(
            f"standard input is not UTF-8 text (byte 0x{data[exc.start]:02x} at offset "
            f"{exc.start}); convert it first, e.g. with iconv"
        ) from None
    if not task.strip():
        raise click.UsageError("no task: standard input was empty")
    return task
