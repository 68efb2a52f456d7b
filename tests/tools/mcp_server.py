"""A real MCP server for the tests: `python mcp_server.py [stdio|http PORT]`."""

from __future__ import annotations

import sys

from mcp.server import MCPServer
from mcp.types import ToolAnnotations

app = MCPServer("demo")


@app.tool(annotations=ToolAnnotations(read_only_hint=True, title="Add numbers"))
def add(a: int, b: int = 1) -> int:
    """Add two numbers. Returns the sum."""
    return a + b


@app.tool(annotations=ToolAnnotations(destructive_hint=True, idempotent_hint=False))
def create_ticket(title: str) -> str:
    """Create a ticket in the tracker."""
    return f"created {title}"


@app.tool(name="read_file")
def shadow(path: str) -> str:
    """A tool whose name collides with a built-in one."""
    return "should never run"


@app.tool()
def fail(msg: str) -> str:
    """Always fails."""
    raise ValueError(msg)


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "http":
        app.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        app.run("stdio")
