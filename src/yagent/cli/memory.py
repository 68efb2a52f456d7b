"""`yagent memory add "text" [--global]` and `yagent memory list`.

Project memories go to `<workspace>/.yagent/memory.json`, user memories (`--global`) to
`<home>/memory.json`; both are injected into every agent's system prompt (see
`yagent.app.memories`). `list` shows both files with each item's id, scope, source and time, and
says when a file cannot be read instead of showing it as empty.
"""

from __future__ import annotations

import datetime
import os
from pathlib import Path

import click

from yagent.app.memories import MemoryFileError, files, heading
from yagent.app.workspace import locate
from yagent.cli import suggest
from yagent.cli.safetext import visible


def _home() -> Path:
    return Path(os.environ.get("YAGENT_HOME") or Path.home() / ".yagent")


def _workspace(path: str | None) -> Path:
    """The workspace `run` would use: the repository's root, from a subfolder too."""
    return locate(Path(path or os.getcwd())).root


def _when(ts: object) -> str:
    if isinstance(ts, int | float) and not isinstance(ts, bool):
        return datetime.datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M")
    return "?"


workspace_option = click.option(
    "--workspace",
    "-C",
    type=click.Path(file_okay=False, exists=True),
    help="The project whose memories to use (default: the repository around this directory).",
)


@click.group(cls=suggest.Group)
def memory() -> None:
    """Project and user memories injected into every agent's context."""


@memory.command("add")
@click.argument("text")
@click.option("--global", "is_global", is_flag=True, help="A user memory, for every project.")
@workspace_option
def add(text: str, is_global: bool, workspace: str | None) -> None:
    """Remember TEXT for this project (or, with --global, everywhere)."""
    project, user = files(_home(), _workspace(workspace))
    target = user if is_global else project
    try:
        item = target.add(text)
    except MemoryFileError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"remembered {item['id']} ({target.scope}) in {target.path}")


@memory.command("list")
@workspace_option
def list_memories(workspace: str | None) -> None:
    """Show the project's and the user's memories (one per line: id, scope, source, time, text)."""
    for memory_file in files(_home(), _workspace(workspace)):
        try:
            items = memory_file.load()
        except MemoryFileError as exc:
            click.echo(f"{memory_file.scope}: {exc}")
            continue
        click.echo(heading(memory_file, len(items)))
        for item in items:  # a project's file comes with the repository: shown, never obeyed
            text = " ".join(item.text.split())
            row = f"  {item.id}  {item.scope}  {item.source or '-'}  {_when(item.at)}  {text}"
            click.echo(visible(row))
