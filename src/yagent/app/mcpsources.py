"""Other agents' MCP server lists, mapped onto yagent's `[mcp.<name>]` tables.

Read: Claude Code's `.mcp.json` and Claude Desktop's `claude_desktop_config.json` (both
`{"mcpServers": {NAME: {command, args, env} | {type: "http", url, headers}}}`), and Codex CLI's
`config.toml` (`[mcp_servers.NAME]`).

Contract:
- A file that cannot be read as its format says — not JSON / TOML, `mcpServers` not an object, a
  server that is not an object/table — is an `McpSourceError` naming the file and the line or the
  key; nothing of it is used.
- Each server becomes a `Found`: its yagent table (checked by `tools.mcp.ServerConfig`, the
  loader's one truth) or None with the reason it cannot be mapped. A server is mapped whole or
  not at all: a field yagent cannot honour (`${VAR}` expansion outside HTTP headers, `${VAR:-x}`
  defaults, the SSE transport, Codex's tool filters or pass-through variables, a disabled server)
  skips the server with that reason — never a partial server that silently does more or less.
- Names keep to letters, digits, `-` and `_` (what `@server:uri` references and tool names use);
  another name is skipped with the reason.
Leaves to the caller: where the files are, trust, and what to do with the tables.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from yagent.tools.mcp.config import McpConfigError, ServerConfig

NAME = re.compile(r"[A-Za-z0-9_-]+")
_PLAIN_VAR = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*\}")
_ANY_VAR = re.compile(r"\$\{[^}]*\}|\$[A-Za-z_]")
_DEFAULTED = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*:-")


class McpSourceError(ValueError):
    """A source file that cannot be read as its format says (named with where it breaks)."""


@dataclass(frozen=True, slots=True)
class Found:
    """One server of a source: its yagent table, or None and why it cannot be one."""

    name: str
    table: dict[str, Any] | None
    why: str = ""


def name_problem(name: str) -> str | None:
    """Why `name` cannot name a yagent MCP server, or None."""
    if NAME.fullmatch(name):
        return None
    return f"name {name!r} must be letters, digits, '-' or '_' (it prefixes the server's tools)"


def _expansion(key: str, value: Any, headers: bool = False) -> str | None:
    """Why a value with `${...}` cannot be kept as it is, or None."""
    texts = [value] if isinstance(value, str) else []
    if isinstance(value, list):
        texts = [v for v in value if isinstance(v, str)]
    if isinstance(value, Mapping):
        texts = [v for v in value.values() if isinstance(v, str)]
    for text in texts:
        if _DEFAULTED.search(text):
            return f"{key!r} uses a ${{VAR:-default}} expansion, which yagent does not do"
        if headers and not _ANY_VAR.search(_PLAIN_VAR.sub("", text)):
            continue  # yagent reads ${NAME} in header values from the environment itself
        if _ANY_VAR.search(text):
            return (
                f"{key!r} uses ${{VAR}} expansion, which yagent does only in HTTP headers: "
                "write the value, or add the server with `yagent mcp add`"
            )
    return None


def _checked(name: str, table: dict[str, Any]) -> Found:
    try:
        ServerConfig.from_mapping(name, table)
    except McpConfigError as exc:
        return Found(name, None, str(exc).replace(f"mcp server {name!r}: ", ""))
    return Found(name, table)


def claude_server(name: str, entry: Mapping[str, Any]) -> Found:
    """One `mcpServers` entry (Claude Code or Claude Desktop) as a yagent table."""
    bad = name_problem(name)
    if bad:
        return Found(name, None, bad)
    kind = entry.get("type", "stdio" if "command" in entry else "http")
    known = {"stdio": {"type", "command", "args", "env"}, "http": {"type", "url", "headers"}}
    if kind == "sse":
        return Found(name, None, "the SSE transport is not supported (streamable HTTP only)")
    if kind not in known:
        return Found(name, None, f"unknown type {kind!r} (yagent maps 'stdio' and 'http')")
    extra = sorted(set(entry) - known[kind])
    if extra:
        return Found(name, None, f"unsupported field {extra[0]!r} for a {kind} server")
    for key in sorted(set(entry) - {"type"}):
        why = _expansion(key, entry[key], headers=key == "headers")
        if why:
            return Found(name, None, why)
    return _checked(name, {k: v for k, v in entry.items() if k != "type"})


_CODEX_KEYS = {
    "command": "command",
    "args": "args",
    "env": "env",
    "cwd": "cwd",
    "url": "url",
    "http_headers": "headers",
}
_CODEX_REFUSED = {
    "env_vars": "passing variables through by name is not supported: list them in 'env'",
    "enabled_tools": "tool filters are not supported (the server would expose all its tools)",
    "disabled_tools": "tool filters are not supported (the server would expose all its tools)",
}


def codex_server(name: str, entry: Mapping[str, Any]) -> Found:
    """One `[mcp_servers.NAME]` table of Codex CLI as a yagent table."""
    bad = name_problem(name)
    if bad:
        return Found(name, None, bad)
    if entry.get("enabled", True) is False:
        return Found(name, None, "disabled in the Codex file (enabled = false)")
    table: dict[str, Any] = {}
    headers: dict[str, Any] = {}
    for key, value in entry.items():
        if key in _CODEX_REFUSED:
            return Found(name, None, f"{key!r}: {_CODEX_REFUSED[key]}")
        if key in _CODEX_KEYS:
            table[_CODEX_KEYS[key]] = value
        elif key == "bearer_token_env_var" and isinstance(value, str):
            headers["Authorization"] = f"Bearer ${{{value}}}"
        elif key == "env_http_headers" and isinstance(value, Mapping):
            headers.update({str(k): f"${{{v}}}" for k, v in value.items()})
        elif key in ("startup_timeout_sec", "tool_timeout_sec"):
            table[key.removesuffix("_sec")] = value
        elif key == "startup_timeout_ms" and isinstance(value, int | float):
            table["startup_timeout"] = value / 1000
        elif key != "enabled":
            return Found(name, None, f"unsupported field {key!r}")
    if headers:
        table["headers"] = {**table.get("headers", {}), **headers}
    for key in ("command", "args", "env", "cwd", "url"):
        why = _expansion(key, table.get(key))
        if why:
            return Found(name, None, why)
    return _checked(name, table)


def _servers(data: Any, key: str, path: Path) -> dict[str, Mapping[str, Any]]:
    servers = data.get(key, {}) if isinstance(data, Mapping) else None
    if not isinstance(servers, Mapping):
        raise McpSourceError(f"{path}: {key!r} must be a table of servers (name → settings)")
    for name, entry in servers.items():
        if not isinstance(entry, Mapping):
            raise McpSourceError(f"{path}: {key}.{name} must be an object of the server's settings")
    return dict(servers)


def read_claude(path: Path, raw: bytes | None = None) -> list[Found]:
    """The servers of a Claude Code `.mcp.json` or a Claude Desktop config file."""
    try:
        data = json.loads((path.read_bytes() if raw is None else raw).decode("utf-8"))
    except OSError as exc:
        raise McpSourceError(f"{path}: cannot be read: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise McpSourceError(f"{path}: not UTF-8 text: {exc.reason}") from None
    except json.JSONDecodeError as exc:
        where = f"line {exc.lineno} column {exc.colno}"
        raise McpSourceError(f"{path}: not valid JSON: {where}: {exc.msg}") from None
    if not isinstance(data, Mapping):
        raise McpSourceError(f"{path}: must be a JSON object with 'mcpServers'")
    return [claude_server(n, e) for n, e in _servers(data, "mcpServers", path).items()]


def read_codex(path: Path) -> list[Found]:
    """The servers of a Codex CLI `config.toml`."""
    try:
        data = tomllib.loads(path.read_bytes().decode("utf-8"))
    except OSError as exc:
        raise McpSourceError(f"{path}: cannot be read: {exc.strerror}") from None
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise McpSourceError(f"{path}: not valid TOML: {exc}") from None
    return [codex_server(n, e) for n, e in _servers(data, "mcp_servers", path).items()]
