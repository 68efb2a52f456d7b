"""The one place the MCP SDK loads: `connect(servers)` gives the host its external tools.

Contract:
- With servers configured, `connect` returns `client.McpTools` for them — importing the client,
  and with it the `mcp` SDK (and the OpenTelemetry API the SDK imports), at that moment.
- With none, it returns `NoServers`: the same face (`Servers`) with no specs, executors,
  problems or notes, and the SDK is never imported — a run that uses no MCP server does not pay
  for loading it. That is lazy loading of a heavy optional dependency at its factory, not an
  import loop hidden in a function (`client` imports nothing from the host).
- `ServerStatus` (what `yagent doctor` shows for one server) lives here so the host can name it
  without the SDK.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from yagent.tools.adapter import Executor
from yagent.tools.mcp.config import ServerConfig
from yagent.toolspec import Spec


@dataclass(frozen=True, slots=True)
class ServerStatus:
    """What `yagent doctor` shows for one server."""

    name: str
    where: str
    connected: bool
    tools: int
    protocol: str
    error: str


class Servers(Protocol):
    """Connected MCP servers inside `async with`: their tools' specs and executors while open."""

    specs: list[Spec]
    executors: dict[str, Executor]
    problems: list[tuple[str, str]]  # (server, why unavailable)
    notes: list[tuple[str, str]]  # (server, a tool not offered)

    async def __aenter__(self) -> Servers: ...

    async def __aexit__(self, *exc: object) -> None: ...

    def status(self) -> list[ServerStatus]: ...


@dataclass
class NoServers:
    """No MCP server configured: nothing offered, nothing to report, nothing loaded."""

    specs: list[Spec] = field(default_factory=list)
    executors: dict[str, Executor] = field(default_factory=dict)
    problems: list[tuple[str, str]] = field(default_factory=list)
    notes: list[tuple[str, str]] = field(default_factory=list)

    async def __aenter__(self) -> NoServers:
        return self

    async def __aexit__(self, *exc: object) -> None:
        return None

    def status(self) -> list[ServerStatus]:
        return []


def connect(servers: tuple[ServerConfig, ...]) -> Servers:
    """The external tools of `servers` (enter it to connect them)."""
    if not servers:
        return NoServers()
    from yagent.tools.mcp.client import McpTools  # the SDK loads here (module docstring)

    return McpTools(servers)
