"""`yagent trust [-C DIR] [--show] [--revoke] [--yes]`: the person's trust in a workspace's files.

A repository's `.yagent/config.toml` and `.yagent/shell-rules.toml` apply only partly until the
person trusted their exact content (`app.projectkeys` says which keys wait). This command shows
what trusting would apply — every withheld key with its value, secrets masked — and records the
hashes of the content it showed (not of whatever is on disk a moment later). It asks on a
terminal; scripts and CI pass `--yes` explicitly (no environment variable or config key trusts a
project: a repository must not be able to trust itself). `--show` only reports; `--revoke`
forgets the workspace's trust. Exit status: 0 done (or nothing to do), 1 the person declined,
2 a usage or configuration problem (no terminal and no --yes, an unreadable trust file).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from yagent.app import projectkeys, trust
from yagent.app.config import load
from yagent.app.trust import Status
from yagent.app.workspace import locate


def _home() -> Path:
    return Path(os.environ.get("YAGENT_HOME") or Path.home() / ".yagent")


def _interactive() -> bool:
    return sys.stdin.isatty()


def _review(project: projectkeys.ProjectState) -> None:
    for file, status in project.status.items():
        click.echo(f"{file}: {status.value}")
    if not project.withheld:
        click.echo("nothing is withheld: every key of these files already applies")
        return
    click.echo("trusting applies these keys, now withheld:")
    for item in project.withheld:
        click.echo(f"  {item.file}: {projectkeys.describe(item)}")


@click.command("trust")
@click.option(
    "--workspace",
    "-C",
    type=click.Path(file_okay=False, exists=True),
    help="The workspace to trust instead of the current directory.",
)
@click.option("--show", is_flag=True, help="Only show the trust state and what waits for it.")
@click.option("--revoke", is_flag=True, help="Forget this workspace's trust.")
@click.option("--yes", is_flag=True, help="Trust without asking (for scripts and CI).")
def trust_command(workspace: str | None, show: bool, revoke: bool, yes: bool) -> None:
    """Review and trust this workspace's own .yagent/ files (or --show, --revoke)."""
    if show + revoke + yes > 1:  # never one silently winning over another
        raise click.UsageError("--show, --revoke and --yes are alternatives: give one")
    home = _home()
    ws = locate(Path(workspace or os.getcwd())).root  # the workspace `run` would use
    store = trust.Store(home)
    try:
        if revoke:
            gone = store.revoke(ws)
            click.echo(f"trust revoked for {ws}" if gone else f"{ws} was not trusted")
            return
        project = load(home=home, workspace=ws).project
        if not project.digests:
            click.echo(f"{ws} has no .yagent/config.toml or shell-rules.toml: nothing to trust")
            return
        _review(project)
        if show or all(s is Status.TRUSTED for s in project.status.values()):
            return
        if not yes:
            if not _interactive():
                raise click.UsageError("not a terminal: pass --yes to trust without asking")
            if not click.confirm(f"Trust these files of {ws} as they are now?", default=False):
                click.echo("not trusted: the withheld keys stay withheld")
                sys.exit(1)
        store.trust(ws, project.digests)  # the content shown above, not a later one
    except trust.TrustError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"trusted {', '.join(project.digests)} of {ws}; a later change needs trusting again")
