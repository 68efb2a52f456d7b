"""`yagent trace SESSION [--html [FILE]]`: what the agents did, in what order, for how long.

The terminal form prints each turn's rows (model calls, tool calls, delegations) with their
measured durations and pairing states; `--html` writes one self-contained file with a timeline
(no network needed to open it) — to FILE, or without one to `trace-<session id>.html` in the
current directory — and prints where (a FILE it cannot write is a usage error, exit 2).
Watchdog warnings recorded in the session are listed.
"""

from __future__ import annotations

from pathlib import Path

import click

from yagent.app.sessionstore import sessions_here
from yagent.app.telemetry import WARNING_EVENT
from yagent.app.timeline import render_html, render_text


def _home() -> Path:
    import os

    return Path(os.environ.get("YAGENT_HOME") or Path.home() / ".yagent")


_DEFAULT = ""  # `--html` given without a FILE


@click.command()
@click.argument("session")
@click.option(
    "--html",
    "html_out",
    type=click.Path(dir_okay=False),
    is_flag=False,
    flag_value=_DEFAULT,
    help="Write a self-contained HTML timeline to FILE (default: trace-<session>.html here).",
)
def trace(session: str, html_out: str | None) -> None:
    """Show a session's trace (rows per turn), or write an HTML timeline."""
    with sessions_here(_home()) as store:
        info = store.get_session(session)
        events = store.events(info.id)
    if html_out is not None:
        if html_out == _DEFAULT:
            html_out = f"trace-{info.id[:12]}.html"
        try:
            Path(html_out).write_text(
                render_html(events, title=info.title or info.id), encoding="utf-8"
            )
        except OSError as exc:
            reason = exc.strerror or str(exc)
            hint = "'--html'"
            raise click.BadParameter(f"cannot write {html_out}: {reason}", param_hint=hint) from exc
        click.echo(f"timeline written to {html_out}")
        return
    click.echo(render_text(events), nl=False)
    warnings = [e for e in events if e.type == WARNING_EVENT]
    for w in warnings:
        click.echo(f"watchdog: {w.payload}")
