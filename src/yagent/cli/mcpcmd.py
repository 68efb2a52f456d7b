"""`yagent mcp add|list|get|remove|import`: the MCP servers of yagent's configuration.

Contract:
- `add` writes `[mcp.<name>]` into the user's `config.toml` (or, `--scope project`, the
  workspace's `.yagent/config.toml`), keeping the rest of the file; a table the loader would
  refuse is refused with the loader's message and nothing is written; an existing name is
  refused unless `--replace`. A stdio command must resolve — a name on PATH (the server's
  `--env PATH=…`, else this one), or an existing executable file — or the add is refused (exit 2)
  unless `--force`, which adds it and says it does not resolve yet. URL servers are not probed.
- `list` / `get` show every server with its scope (user, project, .mcp.json), transport, command
  or URL and whether runs load it (a project's servers wait for `yagent trust`, said so). Values
  of `env` and `headers` are never printed (`***`), nor a URL's user info.
- `remove` takes the name out of the one file that has it (`--scope` when both do); an unknown
  name is refused with the closest known one.
- `import` maps another agent's servers (`app.mcpimport`) and prints one row per server:
  imported, or skipped and why; `--dry-run` writes nothing.
- Exit status: 0 done; 1 `import` found servers but imported none (each row says why); 2 a
  refusal (bad input, unknown name, clash, an untrusted `.mcp.json`), one line, no traceback.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import click

from yagent.app import mcpfiles, mcpimport
from yagent.app.mcpsources import name_problem
from yagent.app.workspace import locate
from yagent.cli import suggest
from yagent.cli.safetext import visible

_SCOPE = click.Choice(mcpfiles.SCOPES)


def _home() -> Path:
    return Path(os.environ.get("YAGENT_HOME") or Path.home() / ".yagent")


def _workspace() -> Path:
    return locate(Path(os.getcwd())).root  # the workspace `run` would use (-C before `mcp`)


def _target(scope: mcpfiles.Scope) -> mcpfiles.Target:
    return mcpfiles.Target(scope, _home(), _workspace())


def _refuse(message: str) -> click.ClickException:
    return click.ClickException(message)


@click.group("mcp", cls=suggest.Group)
def mcp() -> None:
    """Add, list, remove and import MCP servers."""


def _pairs(values: tuple[str, ...], sep: str, what: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for value in values:
        key, found, rest = value.partition(sep)
        if not found or not key.strip():
            raise click.BadParameter(f"{value!r}: give {what}", param_hint=f"--{what.split()[0]}")
        out[key.strip()] = rest.strip() if sep == ":" else rest
    return out


def _table(
    target: tuple[str, ...], url: str | None, transport: str | None, **extra: Any
) -> dict[str, Any]:
    looks_like_url = len(target) == 1 and target[0].startswith(("http://", "https://"))
    kind = transport or ("http" if url or looks_like_url else "stdio")
    if kind == "http":
        if url and target:
            raise click.UsageError("give the URL once: --url URL, or URL after the name")
        if not url and len(target) != 1:
            raise click.UsageError("an http server takes one URL: yagent mcp add NAME --url URL")
        table: dict[str, Any] = {"url": url or target[0]}
    else:
        if url:
            raise click.UsageError("--url is for --transport http; a stdio server takes a command")
        if not target:
            raise click.UsageError("missing COMMAND: yagent mcp add NAME -- COMMAND [ARGS]...")
        table = {"command": target[0]}
        if target[1:]:
            table["args"] = list(target[1:])
    table.update({k: v for k, v in extra.items() if v})
    return table


@mcp.command("add", context_settings={"ignore_unknown_options": False})
@click.argument("name")
@click.argument("target", nargs=-1, metavar="[-- COMMAND [ARGS]... | URL]")
@click.option("--scope", type=_SCOPE, default="user", show_default=True, help="Where to write it.")
@click.option("--transport", type=click.Choice(["stdio", "http"]), help="Default: from the target.")
@click.option("--url", help="The server's streamable HTTP URL.")
@click.option("--env", "-e", "env", multiple=True, metavar="KEY=VALUE", help="stdio: a variable.")
@click.option("--header", "-H", "header", multiple=True, metavar="'NAME: VALUE'", help="http.")
@click.option("--startup-timeout", type=float, help="Seconds to connect and list tools.")
@click.option("--tool-timeout", type=float, help="Idle seconds per tool call.")
@click.option("--replace", is_flag=True, help="Overwrite a server of the same name.")
@click.option("--force", is_flag=True, help="Add a stdio command that does not resolve yet.")
def add(
    name: str,
    target: tuple[str, ...],
    scope: mcpfiles.Scope,
    transport: str | None,
    url: str | None,
    env: tuple[str, ...],
    header: tuple[str, ...],
    startup_timeout: float | None,
    tool_timeout: float | None,
    replace: bool,
    force: bool,
) -> None:
    """Add server NAME: `-- COMMAND [ARGS]...` (stdio) or a URL (streamable HTTP)."""
    bad = name_problem(name)
    if bad:
        raise _refuse(bad)
    table = _table(
        target,
        url,
        transport,
        env=_pairs(env, "=", "env KEY=VALUE"),
        headers=_pairs(header, ":", "header 'NAME: VALUE'"),
        startup_timeout=startup_timeout,
        tool_timeout=tool_timeout,
    )
    problem = _unresolved(table)
    if problem and not force:
        raise _refuse(f"{problem}: install it or give its full path, or pass --force to add it")
    where = _target(scope)
    try:
        replaced = mcpfiles.put(where, name, table, replace)
    except mcpfiles.McpFileError as exc:
        raise _refuse(str(exc)) from None
    verb = "replaced" if replaced else "added"
    _echo(f"{verb} MCP server {name} ({scope}) in {where.path}")
    if problem:
        _echo(f"{name}: the command does not resolve yet ({problem}); runs will fail to start it")
    if scope == "project":
        state = {r.name: r.state for r in mcpfiles.servers(where.home, where.workspace)}
        if state.get(name) != "loaded":
            _echo(f"{name}: {state.get(name, mcpfiles.NOT_TRUSTED)}")


def _unresolved(table: dict[str, Any]) -> str:
    """Why a stdio table's command would not start, or "" (a URL server: nothing to look up).
    A name is looked up on the server's PATH (its `env` PATH, else this one), as it will be."""
    command = table.get("command")
    if not isinstance(command, str):
        return ""
    if os.sep in command:
        path = Path(command).expanduser()
        if not path.is_file():
            return f"{command!r} is not a command on PATH nor an existing file"
        if not os.access(path, os.X_OK):
            return f"{command!r} is not executable (chmod +x it, or name its interpreter)"
        return ""
    search = dict(table.get("env") or {}).get("PATH", os.environ.get("PATH", os.defpath))
    if shutil.which(command, path=search) is None:
        return f"{command!r} is not a command on PATH nor an existing file"
    return ""


def _as_json(row: mcpfiles.Listed) -> dict[str, Any]:
    table = mcpfiles.shown_table(row.table or {})
    return {
        "name": row.name,
        "scope": row.scope,
        "file": str(row.file),
        "transport": row.transport() if row.table else None,
        **table,
        "loaded": row.state == "loaded",
        "state": row.state,
    }


def _where(row: mcpfiles.Listed) -> str:
    table = mcpfiles.shown_table(row.table or {})
    if "url" in table:
        return str(table["url"])
    return " ".join([str(table.get("command", "")), *map(str, table.get("args", []))]).strip()


def _listed(name: str | None) -> list[mcpfiles.Listed]:
    try:
        rows = mcpfiles.servers(_home(), _workspace())
    except mcpfiles.McpFileError as exc:
        raise _refuse(str(exc)) from None
    if name is None:
        return rows
    picked = [r for r in rows if r.name == name]
    if not picked:
        known = [r.name for r in rows]
        raise _refuse(f"no MCP server named {name!r}{mcpfiles.nearest(name, known)}")
    return picked


@mcp.command("list")
@click.argument("name", required=False)
@click.option("--json", "json_mode", is_flag=True, help="One JSON array.")
def list_command(name: str | None, json_mode: bool) -> None:
    """List the configured MCP servers (NAME: only that one, in detail)."""
    rows = _listed(name)
    if json_mode:
        click.echo(json.dumps([_as_json(r) for r in rows], indent=2, ensure_ascii=False))
    elif name is not None:
        _detail(rows)
    elif not rows:
        _echo("no MCP servers configured (add one: yagent mcp add NAME -- COMMAND)")
    else:
        width = max(len(r.name) for r in rows)
        for row in rows:
            kind = row.transport() if row.table else "-"
            _echo(f"{row.name:<{width}}  {row.scope:<9}  {kind:<5}  {_where(row)}")
            if row.state != "loaded":
                _echo(f"{'':<{width}}  {row.state}")


def _detail(rows: list[mcpfiles.Listed]) -> None:
    for row in rows:
        _echo(f"{row.name}:")
        _echo(f"  scope: {row.scope} ({row.file})")
        _echo(f"  state: {row.state}")
        if row.table:
            _echo(f"  transport: {row.transport()}")
        for key, value in mcpfiles.shown_table(row.table or {}).items():
            shown = (
                ", ".join(f"{k}={v}" for k, v in value.items())
                if isinstance(value, dict)
                else value
            )
            _echo(f"  {key}: {shown}")


@mcp.command("get")
@click.argument("name")
@click.option("--json", "json_mode", is_flag=True, help="One JSON array.")
def get(name: str, json_mode: bool) -> None:
    """Show server NAME in detail (values of env and headers masked)."""
    rows = _listed(name)
    if json_mode:
        click.echo(json.dumps([_as_json(r) for r in rows], indent=2, ensure_ascii=False))
    else:
        _detail(rows)


@mcp.command("remove")
@click.argument("name")
@click.option("--scope", type=_SCOPE, help="The file to remove it from (when both have it).")
def remove(name: str, scope: mcpfiles.Scope | None) -> None:
    """Remove server NAME from yagent's configuration."""
    # only the files it edits are read: a table the loader refuses can still be taken out
    home, workspace = _home(), _workspace()
    scopes = (scope,) if scope else mcpfiles.SCOPES
    try:
        have = {s: mcpfiles.tables(mcpfiles.path_of(s, home, workspace)) for s in scopes}
    except mcpfiles.McpFileError as exc:
        raise _refuse(str(exc)) from None
    owned = [s for s in scopes if name in have[s]]
    if len(owned) > 1:
        raise _refuse(f"MCP server {name!r} is in both files: pass --scope user or project")
    if not owned:
        if scope is None and name in mcpfiles.dot_mcp_names(workspace):
            dot = workspace / mcpfiles.DOT_MCP
            raise _refuse(f"MCP server {name!r} is in {dot}: yagent does not edit that file")
        known = [n for tables in have.values() for n in tables]
        raise _refuse(f"no MCP server named {name!r}{mcpfiles.nearest(name, known)}")
    target = mcpfiles.Target(owned[0], home, workspace)
    try:
        mcpfiles.remove(target, name)
    except mcpfiles.McpFileError as exc:
        raise _refuse(str(exc)) from None
    _echo(f"removed MCP server {name} ({owned[0]}) from {target.path}")


@mcp.command("import")
@click.option(
    "--from",
    "source",
    default="claude",
    show_default=True,
    metavar="claude|claude-desktop|codex|FILE",
    help="claude: the workspace's .mcp.json (once trusted).",
)
@click.option("--scope", type=_SCOPE, help="Default: project for claude, else user.")
@click.option("--dry-run", is_flag=True, help="Show what would be imported; write nothing.")
@click.option("--replace", is_flag=True, help="Overwrite servers of the same name.")
def import_command(source: str, scope: mcpfiles.Scope | None, dry_run: bool, replace: bool) -> None:
    """Import MCP servers from Claude Code, Claude Desktop or Codex CLI."""
    home, workspace = _home(), _workspace()
    chosen = scope or mcpimport.DEFAULT_SCOPE.get(source, "user")
    target = mcpfiles.Target(chosen, home, workspace)
    try:
        found = mcpimport.read_source(source, home, workspace, os.environ)
        rows = mcpimport.run(found, target, replace=replace, dry_run=dry_run)
    except mcpimport.McpImportError as exc:
        raise _refuse(str(exc)) from None
    origin = mcpimport.source_path(source, workspace, os.environ)
    if not rows:
        _echo(f"{origin}: no MCP servers to import")
        return
    width = max(len(r.name) for r in rows)
    for row in rows:
        detail = f"  {row.detail}" if row.detail else ""
        _echo(f"{row.action:<12}  {row.name:<{width}}{detail}")
    done = sum(r.action in ("imported", "would import") for r in rows)
    into = f"{target.path} ({chosen})"
    if dry_run:
        _echo(f"dry run: {done} of {len(rows)} would be imported into {into}; nothing written")
    else:
        _echo(f"imported {done} of {len(rows)} from {origin} into {into}")
    if done == 0:
        sys.exit(1)


def _echo(text: str, *, err: bool = False) -> None:
    """A line that may quote a repository's file: its control codes written out."""
    click.echo(visible(text), err=err)
