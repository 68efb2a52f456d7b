"""The one place the MCP SDK loads: `connect(servers)` gives the host its external tools.

Contract:
- With servers configured, `connect` returns `client.McpTools` for them — importing the client,
  and with it the `mcp` SDK (and the OpenTelemetry API the SDK imports), at that moment.
- With none, it returns `NoServers`: the same face (`Servers`) with no specs, executors,
  problems or notes, and the SDK is never imported — a run that uses no MCP server does not pay
  for loading it. That is lazy loading of a heavy optional dependency at its factory, not an
  import loop hidden in a function (`client` imports nothing from the host).
- `ServerStatus` (what `yagent doctor` shows for one server, `mcp.status`) is named here too, so
  the host can name it without the SDK.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from yagent.tools.adapter import Executor
from yagent.tools.mcp.config import ServerConfig
from yagent.tools.mcp.status import ServerStatus
from yagent.toolspec import Spec


class Servers(Protocol):
    """Connected MCP servers inside `async with`: their tools' specs and executors while open."""

    specs: list[Spec]
    executors: dict[str, Executor]
    problems: list[tuple[str, str]]  # (server, why unavailable)
    notes: list[tuple[str, str]]  # (server, a tool not offered)

    async def __aenter__(self) -> Servers: ...

    async def __aexit__(self, *exc: object) -> None: ...

    def status(self) -> list[ServerStatus]: ...

    @property
    def links(self) -> Mapping[str, Any]: ...  # server name → its live link (`client.Link`)

    def watching(self, changed: Callable[[], None]) -> contextlib.AbstractContextManager[None]:
        """`changed()` is called whenever a server's offered tools change while this is open."""
        ...


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

    @property
    def links(self) -> Mapping[str, Any]:
        return {}

    def watching(self, changed: Callable[[], None]) -> contextlib.AbstractContextManager[None]:
        return contextlib.nullcontext()


def connect(
    servers: tuple[ServerConfig, ...],
    *,
    workspace: Path | None = None,
    auth_dir: Path | None = None,
) -> Servers:
    """The external tools of `servers` (enter it to connect them); `workspace` is every server's
    root, `auth_dir` where `oauth = true` servers keep their tokens."""
    if not servers:
        return NoServers()
    from yagent.tools.mcp.client import McpTools  # the SDK loads here (module docstring)
    from yagent.tools.mcp.inbound import Inbound

    return McpTools(servers, Inbound(workspace), auth_dir=auth_dir)
