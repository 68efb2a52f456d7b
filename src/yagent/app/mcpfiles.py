"""The MCP servers of yagent's configuration files, listed and edited in place.

Contract:
- Scopes: `user` is `<home>/config.toml` (applies everywhere), `project` is
  `<workspace>/.yagent/config.toml` (the repository's, behind trust). `servers` also lists the
  workspace's `.mcp.json` (scope `.mcp.json`, read-only here: yagent does not edit other agents'
  files) and says for each server whether `yagent run` loads it and, if not, why.
- `put` and `remove` change only the `[mcp.<name>]` table concerned: the rest of the file —
  comments, other keys, their order — stays as it was (tomlkit). The new file is checked as the
  loader checks it (`app.config.check`: the same message, nothing written when refused) and
  replaces the old one atomically (temp file, fsync, rename; the file's mode kept).
- A project file the person trusted stays trusted after their own `put` / `remove`
  (`trust.Store.carry_over`); an untrusted one stays untrusted.
- `put` refuses an existing name unless `replace`; `remove` refuses an unknown name with the
  closest known one. Both raise `McpFileError` (one line) and write nothing then.
Leaves to the caller: asking, printing, masking (`shown_table`).
"""

from __future__ import annotations

import difflib
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import tomlkit
from tomlkit.exceptions import TOMLKitError

from yagent.app import config as configuration
from yagent.app import trust
from yagent.app.mcpsources import McpSourceError, read_claude
from yagent.tools.atomicfile import atomic_write
from yagent.tools.mcp.config import ServerConfig

Scope = Literal["user", "project"]
SCOPES: tuple[Scope, ...] = ("user", "project")
DOT_MCP = trust.MCP_JSON
NOT_TRUSTED = "not loaded: project not trusted — run `yagent trust`"


class McpFileError(Exception):
    """A refused edit or an unreadable file, said in one line."""


@dataclass(frozen=True, slots=True)
class Listed:
    """One configured server: where it is written, its table, and whether runs load it."""

    name: str
    scope: str  # user, project, .mcp.json
    file: Path
    table: Mapping[str, Any] | None  # None: cannot be mapped (`state` says why)
    state: str  # "loaded", or "not loaded: <why>"

    def transport(self) -> str:
        return "http" if self.table and "url" in self.table else "stdio"


def path_of(scope: Scope, home: Path, workspace: Path) -> Path:
    return home / "config.toml" if scope == "user" else workspace / trust.CONFIG_FILE


def tables(path: Path) -> dict[str, Mapping[str, Any]]:
    """The `[mcp.<name>]` tables of one config file (none without a file)."""
    if not path.is_file():
        return {}
    try:
        data = tomllib.loads(path.read_bytes().decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise McpFileError(f"{path}: not valid TOML: {exc}") from None
    mcp = data.get("mcp", {})
    if not isinstance(mcp, Mapping):
        raise McpFileError(f"{path}: 'mcp' must be a table of servers ([mcp.NAME])")
    return {str(k): v for k, v in mcp.items() if isinstance(v, Mapping)}


def servers(home: Path, workspace: Path) -> list[Listed]:
    """Every server the user's file, the project's file and `.mcp.json` define, in that order."""
    user_file, project_file = path_of("user", home, workspace), path_of("project", home, workspace)
    state = configuration.load(home=home, workspace=workspace).project.status
    loaded_project = state.get(trust.CONFIG_FILE) is trust.Status.TRUSTED
    out: list[Listed] = []
    user = tables(user_file)
    out += [Listed(n, "user", user_file, t, "loaded") for n, t in user.items()]
    project: dict[str, Mapping[str, Any]] = {}
    if project_file.is_file() and not (user_file.is_file() and project_file.samefile(user_file)):
        project = tables(project_file)
    for name, table in project.items():
        how = "loaded" if loaded_project else _why(state.get(trust.CONFIG_FILE))
        out.append(Listed(name, "project", project_file, table, how))
    dot = workspace / DOT_MCP
    if dot.is_file():
        try:
            found = read_claude(dot)
        except McpSourceError as exc:
            raise McpFileError(str(exc)) from None
        trusted = state.get(DOT_MCP) is trust.Status.TRUSTED
        for item in found:
            how = "loaded" if trusted else _why(state.get(DOT_MCP))
            if item.table is None:
                how = f"not loaded: {item.why}"
            elif item.name in user or item.name in project:
                how = f"not loaded: [mcp.{item.name}] in config.toml has the same name and wins"
            out.append(Listed(item.name, DOT_MCP, dot, item.table, how))
    return out


def dot_mcp_names(workspace: Path) -> list[str]:
    """The server names of the workspace's `.mcp.json` (none when it is missing or unreadable)."""
    dot = workspace / DOT_MCP
    try:
        return [found.name for found in read_claude(dot)] if dot.is_file() else []
    except McpSourceError:
        return []


def _why(status: trust.Status | None) -> str:
    if status is trust.Status.CHANGED:
        return "not loaded: project file changed since you trusted it — run `yagent trust`"
    return NOT_TRUSTED


def shown_table(table: Mapping[str, Any]) -> dict[str, Any]:
    """`table` as it may be printed: env and header values masked, the URL without userinfo."""
    out = dict(table)
    for key in ("env", "headers"):
        if isinstance(out.get(key), Mapping):
            out[key] = {str(k): "***" for k in out[key]}
    if isinstance(out.get("url"), str):
        out["url"] = ServerConfig(name="x", url=out["url"]).shown()
    return out


def _document(path: Path) -> tuple[bytes | None, tomlkit.TOMLDocument]:
    before = path.read_bytes() if path.is_file() else None
    try:
        return before, tomlkit.parse(before.decode("utf-8")) if before else tomlkit.document()
    except (UnicodeDecodeError, TOMLKitError) as exc:
        raise McpFileError(f"{path}: not valid TOML: {exc}") from None


@dataclass(frozen=True, slots=True)
class Target:
    """The file one scope writes: the user's or the workspace's config.toml."""

    scope: Scope
    home: Path
    workspace: Path

    @property
    def path(self) -> Path:
        return path_of(self.scope, self.home, self.workspace)


def _save(target: Target, before: bytes | None, doc: tomlkit.TOMLDocument) -> None:
    path, after = target.path, tomlkit.dumps(doc).encode("utf-8")
    try:
        configuration.check(path, after)
    except configuration.ConfigError as exc:
        raise McpFileError(str(exc)) from None
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, after)
    if target.scope == "project":
        try:
            trust.Store(target.home).carry_over(target.workspace, trust.CONFIG_FILE, before, after)
        except trust.TrustError as exc:
            raise McpFileError(f"written, but its trust was not recorded: {exc}") from None


def put(target: Target, name: str, table: Mapping[str, Any], replace: bool) -> bool:
    """Write `[mcp.<name>]` into the target's file; True when it replaced an existing table."""
    path = target.path
    before, doc = _document(path)
    mcp = doc.get("mcp")
    if mcp is None:
        mcp = tomlkit.table(is_super_table=True)
        doc["mcp"] = mcp
    if not isinstance(mcp, dict):
        raise McpFileError(f"{path}: 'mcp' must be a table of servers ([mcp.NAME])")
    existed = name in mcp
    if existed and not replace:
        raise McpFileError(
            f"an MCP server named {name!r} is already in {path}: pass --replace to overwrite it"
        )
    entry = tomlkit.table()
    for key, value in table.items():
        entry[key] = tomlkit.inline_table() if isinstance(value, Mapping) else value
        if isinstance(value, Mapping):
            entry[key].update(value)
    mcp[name] = entry
    _save(target, before, doc)
    return existed


def remove(target: Target, name: str) -> None:
    """Remove `[mcp.<name>]` from the target's file."""
    path = target.path
    before, doc = _document(path)
    mcp = doc.get("mcp")
    if not isinstance(mcp, dict) or name not in mcp:
        raise McpFileError(f"no MCP server named {name!r} in {path}{nearest(name, tables(path))}")
    del mcp[name]
    if not mcp:
        del doc["mcp"]
    _save(target, before, doc)


def nearest(name: str, known: Mapping[str, Any] | list[str]) -> str:
    """` (did you mean 'x'?)` for the closest known name, else the names there are (or that
    there are none)."""
    close = difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)
    if close:
        return f" (did you mean {close[0]!r}?)"
    return f" (configured: {', '.join(sorted(known))})" if known else " (none is configured)"
