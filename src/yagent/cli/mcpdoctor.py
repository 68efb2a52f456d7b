"""`yagent doctor`'s MCP rows: each configured server connected once, as `yagent run` would.

One row per `[mcp.<name>]`: connected or not, its tool count and protocol version, or the error
(with the server's stderr tail). A failing server is not a failed doctor: the run goes on without
it (and reconnects), so the row is informational — but never silent.

With no server configured the row says so and nothing of the MCP client is imported: the client's
factory (`tools.mcp.connect`, which brings the tool adapter and, connecting, the `mcp` SDK) is
imported in `_probe`, its one point of use — lazy loading of an optional heavy dependency, not
an import loop hidden in a function (`tools.mcp` imports nothing from `cli`).
"""

from __future__ import annotations

from typing import Any

import anyio

from yagent.tools.mcp.config import ServerConfig
from yagent.tools.mcp.status import ServerStatus


async def _probe(servers: tuple[ServerConfig, ...]) -> list[ServerStatus]:
    from yagent.tools.mcp.connect import connect  # the MCP client: only for configured servers

    async with connect(servers) as mcp:
        return mcp.status()


def mcp_rows(config: Any) -> list[tuple[str, bool, str, bool]]:
    """(check, ok, detail, required) rows for the configured MCP servers."""
    servers = tuple(
        ServerConfig.from_mapping(name, server.model_dump(exclude_none=True))
        for name, server in sorted(config.mcp.items())
    )
    if not servers:
        return [("mcp", True, "no MCP servers configured", False)]
    rows: list[tuple[str, bool, str, bool]] = []
    for status in anyio.run(_probe, servers):
        if status.connected:
            detail = f"{status.where}: {status.tools} tools, protocol {status.protocol}"
        else:
            detail = f"{status.where}: unavailable: {status.error}"
        rows.append((f"mcp {status.name}", status.connected, detail, False))
    return rows
