"""`yagent doctor`: whether yagent can work here — the stores' integrity (with `--salvage` a copy
of what a damaged one still holds), the disk, whether the home can be written (the line a
command that must write there says, `cli.unwritable`; a store there is then not checked, never
called damaged), the configuration, the provider (`cli.providerdoctor`, naming this home's
`config.toml`), the settings, ripgrep, chromium, bwrap, the egress the preset gives, the
project trust, the MCP servers (`cli.mcpdoctor`), the `[store] url` database and the Temporal
frontend of `YAGENT_TEMPORAL_ADDRESS` (`cli.scaledoctor`). The workspace is the repository's
root, from a subfolder too, as `run` uses it (`app.workspace.locate`). One row per check; exit 1
when a required check fails.

It reads the configuration and looks at the machine: it builds no tool surface, runs no tool and
opens no session store, so none of that is imported (`tests/cli/test_startup.py` is the gate).
"""

from __future__ import annotations

import datetime
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table
from rich.text import Text

from yagent.app import projectkeys
from yagent.app.config import ConfigError, load
from yagent.app.workspace import locate
from yagent.cli import unwritable
from yagent.cli.mcpdoctor import mcp_rows
from yagent.cli.providerdoctor import provider_row
from yagent.cli.scaledoctor import ADDRESS_ENV, database_rows, temporal_rows
from yagent.kernel.confine.sandbox import Level
from yagent.kernel.durable import sqlitefile
from yagent.kernel.judge.preset import BUILTIN as BUILTIN_PRESETS
from yagent.tools.searchkit.locate import locate_rg
from yagent.tools.settings import Settings, SettingsError

FULL_BELOW = 64 * 1024  # bytes free under which `yagent doctor` calls the home's disk full


def _home() -> Path:
    return Path(os.environ.get("YAGENT_HOME") or Path.home() / ".yagent")


def _checks(home: Path, workspace: Path) -> list[tuple[str, bool, str, bool]]:
    """(check, ok, detail, required) rows."""
    rows: list[tuple[str, bool, str, bool]] = []
    try:
        config = load(home=home, workspace=workspace)
        rows.append(("config", True, ", ".join(config.sources) or "defaults", True))
    except ConfigError as exc:
        return [("config", False, str(exc), True)]
    rows.append(provider_row(config, home))
    try:
        Settings(home).load()
        rows.append(("settings", True, str(home / "settings.json"), True))
    except SettingsError as exc:
        rows.append(("settings", False, str(exc), True))
    rg = locate_rg()
    found = (
        f"{rg.path} ({rg.source})" if rg else "not found: search uses the slower Python fallback"
    )
    rows.append(("ripgrep", rg is not None, found, False))
    for name, tool in (("chromium", "chromium"), ("bwrap", "bwrap")):
        path = shutil.which(tool)
        rows.append(
            (
                name,
                path is not None,
                path
                or f"{tool} not found (apt-get install "
                f"{'bubblewrap' if tool == 'bwrap' else tool})",
                False,
            )
        )
    rows.append(_egress(config))
    rows.append(_trust(config))
    rows.extend(mcp_rows(config))
    rows.extend(database_rows(config.store.url))
    rows.extend(temporal_rows(os.environ.get(ADDRESS_ENV, "").strip()))
    return rows


def _trust(config: Any) -> tuple[str, bool, str, bool]:
    """Whether the workspace's own files are trusted, and what waits for `yagent trust`."""
    project = config.project
    if not project.digests:
        return ("project trust", True, "no project files (.yagent/config.toml, shell-rules)", False)
    states = "; ".join(f"{f}: {s.value}" for f, s in project.status.items())
    line = projectkeys.notice(project)
    return ("project trust", line is None, f"{states}" + (f" — {line}" if line else ""), False)


def _egress(config: Any) -> tuple[str, bool, str, bool]:
    """What network a shell command gets under the configured preset and `[sandbox]`."""
    chosen = BUILTIN_PRESETS.resolve(config.agent.preset)
    hosts = config.sandbox.allow_hosts
    if chosen.level < Level.NAMESPACES:
        detail = f"preset {chosen.name!r}: commands run on the host, with its whole network"
    elif hosts:
        detail = (
            f"preset {chosen.name!r}: sandboxed commands reach only {', '.join(hosts)} "
            "through yagent's egress proxy (netguard judges every address)"
        )
    else:
        detail = (
            f"preset {chosen.name!r}: sandboxed commands have no network ([sandbox] allow_hosts)"
        )
    return ("egress", True, detail, False)


def _space(home: Path) -> tuple[str, bool, str, bool]:
    """Whether the disk holding the home has room for a run's record (`FULL_BELOW`)."""
    where = home if home.exists() else home.parent
    try:
        info = os.statvfs(where)
    except OSError as exc:
        return ("disk space", False, f"{where}: cannot be measured ({exc})", True)
    free = info.f_bavail * info.f_frsize
    if free < FULL_BELOW:
        detail = (
            f"the disk holding {where} is full ({free // 1024} KiB free): free space there; "
            "`yagent resume SID` then continues a run it stopped"
        )
        return ("disk space", False, detail, True)
    return ("disk space", True, f"{where}: {free // (1024 * 1024)} MiB free", True)


def _writable(home: Path) -> tuple[str, bool, str, bool]:
    """Whether yagent can write its home (or create it): the sentence a command that must write
    there says (`cli.unwritable`), without its `yagent: `."""
    refused = unwritable.refusing(home)
    if refused is None:
        return ("home", True, f"{home}: writable", True)
    said = unwritable.line(*refused, home).removeprefix("yagent: ")
    return ("home", False, said, True)


def _stores(home: Path, salvage: bool) -> list[tuple[str, bool, str, bool]]:
    """`PRAGMA quick_check` on each store (read-only); with `salvage`, a copy of what is still
    readable of a damaged one, written next to it and named in the row. A store in a home that
    cannot be written is not checked — SQLite writes beside a store (its `-shm` file) to read it
    — and is never called damaged for that."""
    home_row = _writable(home)
    rows: list[tuple[str, bool, str, bool]] = [_space(home), home_row]
    for name in ("sessions.db", "durable.db"):
        path = home / name
        if not path.exists():
            rows.append((name, True, "not created yet", True))
            continue
        verdict = sqlitefile.check(path)
        if verdict == "ok":
            rows.append((name, True, f"{path}: integrity ok", True))
            continue
        if not home_row[1]:
            detail = (
                f"{path}: not checked: {home} cannot be written, and SQLite reads a store by "
                "writing beside it (the home row says what to do)"
            )
            rows.append((name, False, detail, True))
            continue
        detail = f"{path}: {verdict}"
        if salvage:
            stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
            done = sqlitefile.salvage(path, path.with_name(f"{name}.salvage-{stamp}.db"))
            copied = sum(done.rows.values())
            detail += f" — salvage copy {done.dest}: {copied} rows of {len(done.rows)} tables"
            detail += "".join(f"; {problem}" for problem in done.problems[:3])
        else:
            detail += " — `yagent doctor --salvage` copies what is readable into a new file"
        rows.append((name, False, detail + "; then move the damaged file aside", True))
    return rows


@click.command()
@click.option("--salvage", is_flag=True, help="Copy what is readable of a damaged store.")
def doctor(salvage: bool) -> None:
    """Check that yagent can work here."""
    workspace = locate(Path.cwd()).root  # the repository's root, from a subfolder too (as `run`)
    rows = _stores(_home(), salvage) + _checks(_home(), workspace)
    table = Table("check", "ok", "detail")
    for name, ok, detail, required in rows:
        mark = "[green]ok[/]" if ok else "[red]FAIL[/]" if required else "[yellow]missing[/]"
        table.add_row(name, mark, Text(detail))  # a detail's `[sandbox]` is text, not markup
    Console().print(table)
    sys.exit(0 if all(ok for _, ok, _, required in rows if required) else 1)
