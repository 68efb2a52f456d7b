"""`yagent mcp import`: other agents' MCP servers written into yagent's configuration.

Sources (`SOURCES`), found from the environment (so a test's fake HOME is the home):
- `claude`: the workspace's `.mcp.json` (Claude Code's project servers). It comes with the
  repository, so it is imported only when the person trusted its exact content (`yagent trust`);
  an untrusted or changed file is refused with that reason. Default scope: project.
- `claude-desktop`: `$XDG_CONFIG_HOME/Claude/claude_desktop_config.json` (default
  `~/.config/Claude/…`; `~/Library/Application Support/Claude/…` on macOS). Default scope: user.
- `codex`: `$CODEX_HOME/config.toml` (default `~/.codex/config.toml`), `[mcp_servers.NAME]`.
  Default scope: user.
- any other value is a FILE: `*.toml` read as Codex's format, anything else as `mcpServers` JSON.

Contract:
- `plan` decides per server: imported, or skipped with the reason (cannot be mapped —
  `app.mcpsources` says why —, or the name is already in the target file and `replace` is off).
  Nothing is silently dropped; a dry run plans the same and writes nothing.
- A missing or malformed source file is an `McpImportError` naming it (and the line or key).
- Writing goes through `app.mcpfiles.put`: the loader's checks, the rest of the file kept.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from yagent.app import trust
from yagent.app.mcpfiles import McpFileError, Scope, Target, put, tables
from yagent.app.mcpsources import Found, McpSourceError, read_claude, read_codex

SOURCES = ("claude", "claude-desktop", "codex")
DEFAULT_SCOPE: Mapping[str, Scope] = {"claude": "project"}


class McpImportError(Exception):
    """A source that cannot be imported from, said in one line."""


@dataclass(frozen=True, slots=True)
class Row:
    """What happens to one server: `imported` (or `would import`) or `skipped`, and why."""

    name: str
    action: str
    detail: str


def _home(environ: Mapping[str, str]) -> Path:
    return Path(environ.get("HOME") or Path.home())


def source_path(source: str, workspace: Path, environ: Mapping[str, str]) -> Path:
    """The file a source name stands for (a FILE as given)."""
    home = _home(environ)
    if source == "claude":
        return workspace / trust.MCP_JSON
    if source == "claude-desktop":
        if sys.platform == "darwin":
            return home / "Library/Application Support/Claude/claude_desktop_config.json"
        base = Path(environ.get("XDG_CONFIG_HOME") or home / ".config")
        return base / "Claude" / "claude_desktop_config.json"
    if source == "codex":
        return Path(environ.get("CODEX_HOME") or home / ".codex") / "config.toml"
    return Path(source).expanduser()


def _trusted_dot_mcp(path: Path, raw: bytes, home: Path, workspace: Path) -> None:
    try:
        status = trust.Store(home).status(workspace, trust.MCP_JSON, raw)
    except trust.TrustError as exc:
        raise McpImportError(str(exc)) from None
    if status is not trust.Status.TRUSTED:
        raise McpImportError(
            f"{path} comes with the repository and is {status.value}: review it with "
            "`yagent trust`, then import"
        )


def read_source(
    source: str, home: Path, workspace: Path, environ: Mapping[str, str]
) -> list[Found]:
    """The servers of `source` (see the module contract), the trust of `.mcp.json` checked."""
    path = source_path(source, workspace, environ)
    if not path.is_file():
        raise McpImportError(f"{path}: no such file (nothing to import from {source})")
    try:
        if path.suffix == ".toml":
            return read_codex(path)
        raw = path.read_bytes()
        dot_mcp = workspace / trust.MCP_JSON
        if dot_mcp.is_file() and os.path.samefile(path, dot_mcp):
            _trusted_dot_mcp(path, raw, home, workspace)
        return read_claude(path, raw)
    except McpSourceError as exc:
        raise McpImportError(str(exc)) from None


def plan(found: list[Found], existing: Mapping[str, object], replace: bool) -> list[Row]:
    """What importing `found` into a file holding `existing` servers does, server by server."""
    rows: list[Row] = []
    for item in found:
        if item.table is None:
            rows.append(Row(item.name, "skipped", item.why))
        elif item.name in existing and not replace:
            rows.append(Row(item.name, "skipped", "already configured here (--replace overwrites)"))
        else:
            how = "replaces the existing one" if item.name in existing else ""
            rows.append(Row(item.name, "imported", how))
    return rows


def run(found: list[Found], target: Target, *, replace: bool, dry_run: bool) -> list[Row]:
    """Import `found` into the target's file (or, with `dry_run`, only say what would be)."""
    try:
        rows = plan(found, tables(target.path), replace)
    except McpFileError as exc:
        raise McpImportError(str(exc)) from None
    tables_of = {f.name: f.table for f in found}
    out: list[Row] = []
    for row in rows:
        table = tables_of.get(row.name)
        if row.action != "imported" or table is None:
            out.append(row)
        elif dry_run:
            out.append(Row(row.name, "would import", row.detail))
        else:
            try:
                put(target, row.name, table, replace)
            except McpFileError as exc:
                out.append(Row(row.name, "skipped", str(exc)))
                continue
            out.append(row)
    return out
