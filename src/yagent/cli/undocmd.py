"""`yagent undo [SESSION]`: revert the latest turn of a session that changed files, without a
prompt — a one-shot `yagent run` included (it is a turn of its session like an interactive one).

Contract:
- SESSION is an id or a unique prefix; none: the latest session of this workspace (as `yagent
  resume`). The revert is `/undo`'s (`cli.edits.undo`): a file is put back only when it still
  holds what the agent's change left; a file changed since is kept and named with the diff from
  what the agent left to what it holds now; what cannot be reverted is named. Each line is
  printed with its control codes written out (paths come from the workspace).
- The session's lease is taken for the undo (`app.lease`): a session running in another yagent
  process is refused, never reverted under it.
- Exit status: 0 a turn was undone (lines say what was restored, removed, kept), 1 nothing to
  undo (no turn changed a file, or all are undone), 2 refused: no session here, an unknown or
  ambiguous SESSION, the session running elsewhere, an unreadable store or configuration.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
import click

from yagent.app.config import load
from yagent.app.durable import open_home
from yagent.app.lease import Holder
from yagent.app.sessionstore import open_sessions
from yagent.app.workspace import locate
from yagent.cli import edits
from yagent.cli.safetext import visible
from yagent.memory import SessionStoreError


def _home() -> Path:
    return Path(os.environ.get("YAGENT_HOME") or Path.home() / ".yagent")


@click.command("undo")
@click.argument("session", required=False)
def undo(session: str | None) -> None:
    """Revert the last turn's file changes of SESSION (default: the latest here)."""
    home, workspace = _home(), locate(Path.cwd()).root  # the repository's root, as `run`
    config = load(home=home, workspace=workspace)
    with open_sessions(home, config.store.url) as store:
        if session:
            info = store.get_session(session)
        else:
            recent = store.list_sessions(limit=1, workspace=str(workspace))
            if not recent:
                raise click.ClickException("no session to undo in this workspace")
            info = recent[0]
        durable = open_home(home, config)
        holder = Holder.this_process()
        try:
            anyio.run(durable.leases.acquire, info.id, holder)
            try:
                done = edits.undo(store, info.id, home / "state" / info.id, Path(info.workspace))
            finally:
                anyio.run(durable.leases.release, info.id, holder)
        except SessionStoreError as exc:
            raise click.ClickException(f"undo stopped: {exc}") from None
        finally:
            durable.close()
    click.echo(f"session {info.id[:12]}: {visible(info.title)}")
    for line, shown in done:
        click.echo(visible(line))
        for diff_line in shown:
            click.echo("  " + visible(diff_line))
    sys.exit(1 if done and done[0][0] == edits.NOTHING else 0)
