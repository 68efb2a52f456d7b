"""`yagent rules import [--from claude|codex|FILE] [--scope project|user] [--dry-run] [-C DIR]`.

Reads Claude Code's `permissions` and Codex CLI's `prefix_rule` files and writes what yagent can
represent into a config file (`app.rulesimport` says what maps to what and where it is read and
written). Prints one line per source entry — `imported` with what it became, or `not imported`
with why — then where it was written (`--dry-run`: nothing is written, the table is the same).
A project destination's allow rules wait for `yagent trust`, as every loosening key of a
repository's file; the output says so.

Exit status: 0 done (some entries may be listed as not imported), 1 no source file found,
2 a usage error or a file that cannot be read (malformed JSON, TOML or rules: file and line).
"""

from __future__ import annotations

import os
from pathlib import Path

import click

from yagent.app import rulesimport
from yagent.app.workspace import locate
from yagent.cli import suggest
from yagent.cli.safetext import visible


def _home() -> Path:
    return Path(os.environ.get("YAGENT_HOME") or Path.home() / ".yagent")


@click.group("rules", cls=suggest.Group)
def rules() -> None:
    """Import command and read rules from Claude Code and Codex CLI."""


def _paths(origin: str, scope: str, workspace: Path) -> list[Path]:
    if origin in ("claude", "codex", "both"):
        return rulesimport.sources(origin, scope, workspace, Path.home(), os.environ)
    path = Path(origin).expanduser()
    if not path.is_file():
        raise click.BadParameter(
            f"{origin!r} is not claude, codex or an existing file", param_hint="--from"
        )
    if path.suffix not in (".json", ".rules"):
        raise click.BadParameter(
            f"{origin}: a Claude settings file ends in .json, a Codex rules file in .rules",
            param_hint="--from",
        )
    return [path]


@rules.command("import")
@click.option(
    "--from",
    "origin",
    default="both",
    metavar="claude|codex|FILE",
    help="Where to read rules (default: Claude's and Codex's files of the scope).",
)
@click.option(
    "--scope",
    type=click.Choice(["project", "user"]),
    default="project",
    show_default=True,
    help="Read and write the project's files or your own.",
)
@click.option("--dry-run", is_flag=True, help="Show what would be imported; write nothing.")
@click.option(
    "--workspace",
    "-C",
    type=click.Path(file_okay=False, exists=True),
    help="The workspace instead of the current directory.",
)
def import_command(origin: str, scope: str, dry_run: bool, workspace: str | None) -> None:
    """Import Claude permissions and Codex prefix rules into a yagent config."""
    ws = locate(Path(workspace or os.getcwd())).root
    paths = _paths(origin, scope, ws)
    if not paths:
        where = "this project" if scope == "project" else "your home"
        _echo(
            f"no {origin if origin != 'both' else 'Claude or Codex'} rules found in "
            f"{where} (--from FILE names one)",
            err=True,
        )
        raise SystemExit(1)
    target = rulesimport.destination(scope, ws, _home())
    try:
        document, existing = rulesimport.load_destination(target)
        result = rulesimport.plan(paths, existing)
    except rulesimport.RulesImportError as exc:
        _echo(f"yagent: {exc}", err=True)
        raise SystemExit(2) from None
    for item in result.items:
        if item.imported:
            note = f" ({item.why})" if item.why else ""
            _echo(f"imported      {item.original} -> {item.target}{note}  [{item.source}]")
        else:
            _echo(f"not imported  {item.original}: {item.why}  [{item.source}]")
    count = len(result.rules) + len(result.deny_read)
    if dry_run:
        _echo(f"dry run: {count} entr{'y' if count == 1 else 'ies'} would go to {target}")
        return
    if count:
        rulesimport.write(target, document, result)
    _echo(f"{count} entr{'y' if count == 1 else 'ies'} written to {target}")
    if scope == "project" and any(r["verdict"] == "allow" for r in result.rules):
        _echo("the project file's allow rules apply once you trusted it: `yagent trust`")


def _echo(text: str, *, err: bool = False) -> None:
    """A line that may quote a repository's file: its control codes written out."""
    click.echo(visible(text), err=err)
