"""One configured MCP server: how to reach it and how long to wait for it.

Contract:
- Exactly one of `command` (stdio) or `url` (streamable HTTP); anything else is an
  `McpConfigError` naming the server and the key (the app's config model refuses the same, so a
  bad `[mcp.X]` table is a configuration error before anything starts).
- `startup_timeout` bounds connecting, the handshake and the tool listing; `tool_timeout` is the
  idle bound of one tool call (each progress notification from the server starts it again).
- `headers` (HTTP only) are sent with every request; `${NAME}` in a value is replaced by the
  environment variable NAME when connecting — a variable that is not set makes the server
  unavailable with that reason, never a request with an empty credential. Header values are
  never shown (`shown()` masks them).
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

STARTUP_TIMEOUT = 30.0
TOOL_TIMEOUT = 120.0
_KEYS = {
    "command",
    "args",
    "env",
    "cwd",
    "url",
    "headers",
    "startup_timeout",
    "tool_timeout",
}
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


class McpConfigError(ValueError):
    pass


def _strings(name: str, key: str, value: Any) -> dict[str, str] | None:
    if value is None:
        return None
    if not isinstance(value, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise McpConfigError(f"mcp server {name!r}: {key!r} must map names to strings")
    return dict(value)


def _seconds(name: str, key: str, value: Any, default: float) -> float:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise McpConfigError(f"mcp server {name!r}: {key!r} must be a number of seconds")
    if not math.isfinite(value) or value <= 0:
        raise McpConfigError(f"mcp server {name!r}: {key!r} must be positive, not {value}")
    return float(value)


@dataclass(frozen=True, slots=True)
class ServerConfig:
    name: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] | None = None
    cwd: str | None = None
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    startup_timeout: float = STARTUP_TIMEOUT
    tool_timeout: float = TOOL_TIMEOUT

    @classmethod
    def from_mapping(cls, name: str, data: Mapping[str, Any]) -> ServerConfig:
        unknown = sorted(set(data) - _KEYS)
        if unknown:
            raise McpConfigError(f"mcp server {name!r}: unknown keys {unknown}")
        command, url = data.get("command"), data.get("url")
        if (command is None) == (url is None):
            raise McpConfigError(
                f"mcp server {name!r}: give exactly one of 'command' (stdio) or 'url' (HTTP)"
            )
        for key, value in (("command", command), ("url", url)):
            if value is not None and (not isinstance(value, str) or not value.strip()):
                raise McpConfigError(f"mcp server {name!r}: {key!r} must be a non-empty string")
        args = data.get("args", [])
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            raise McpConfigError(f"mcp server {name!r}: 'args' must be a list of strings")
        headers = _strings(name, "headers", data.get("headers")) or {}
        if headers and url is None:
            raise McpConfigError(f"mcp server {name!r}: 'headers' need a 'url' server")
        return cls(
            name,
            command,
            tuple(args),
            _strings(name, "env", data.get("env")),
            data.get("cwd"),
            url,
            headers,
            _seconds(name, "startup_timeout", data.get("startup_timeout"), STARTUP_TIMEOUT),
            _seconds(name, "tool_timeout", data.get("tool_timeout"), TOOL_TIMEOUT),
        )

    def resolved_headers(self, environ: Mapping[str, str] | None = None) -> dict[str, str]:
        """The headers with `${NAME}` replaced from the environment; a missing one is an error."""
        env = os.environ if environ is None else environ
        out: dict[str, str] = {}
        for key, value in self.headers.items():
            missing = [m for m in _VAR.findall(value) if m not in env]
            if missing:
                raise McpConfigError(
                    f"mcp server {self.name!r}: header {key!r} needs ${{{missing[0]}}}, "
                    "which is not set in the environment"
                )
            out[key] = _VAR.sub(lambda m: env[m.group(1)], value)
        return out

    def shown(self) -> str:
        """Where the server is, for people: the command or the URL (never header values)."""
        if self.url is not None:
            parts = urlsplit(self.url)
            host = parts.netloc.rsplit("@", 1)[-1]
            return urlunsplit(parts._replace(netloc=host))
        return " ".join([self.command or "", *self.args]).strip()
