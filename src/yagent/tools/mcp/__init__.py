"""External tools from MCP servers: configuration, specs, content, links and the client.

`McpTools` (in `client`) is what the host enters; `ServerConfig` (in `config`) what it builds from
`[mcp.<name>]`; `to_spec` / `Hints` (in `specs`) how a server's tool becomes a judged `Spec`.
"""

from yagent.tools.mcp.client import McpTools, ServerStatus
from yagent.tools.mcp.config import McpConfigError, ServerConfig
from yagent.tools.mcp.content import render_content
from yagent.tools.mcp.specs import Hints, spec_name, to_spec

__all__ = [
    "Hints",
    "McpConfigError",
    "McpTools",
    "ServerConfig",
    "ServerStatus",
    "render_content",
    "spec_name",
    "to_spec",
]
