"""A small MCP server whose tool list grows on request, built with the official SDK's MCPServer.

The reference servers cannot change their tool list on demand (server-everything only does so
once, right after the handshake), so this is the one server the tests write themselves: `grow`
adds a read-only tool named by its argument and sends `notifications/tools/list_changed`.
Run as `python -m tests.mcp_growing` (stdio).
"""

from __future__ import annotations

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import ToolAnnotations

CLOSED_READ = ToolAnnotations(read_only_hint=True, open_world_hint=False)
server = MCPServer("growing")


@server.tool(annotations=CLOSED_READ)
async def grow(name: str, ctx: Context) -> str:  # type: ignore[type-arg]
    """Add a tool called `name` that greets."""

    async def added() -> str:
        return f"{name} says hello"

    server.add_tool(
        added, name=name, description=f"The grown tool {name}.", annotations=CLOSED_READ
    )
    await ctx.session.send_tool_list_changed()
    return f"added {name}"


if __name__ == "__main__":
    server.run()
