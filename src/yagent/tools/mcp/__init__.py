"""External tools from MCP servers: configuration, specs, content, links and the client.

`connect(servers)` (in `connect`) is what the host enters — `McpTools` (in `client`) when servers
are configured, loading the `mcp` SDK then and only then; `ServerConfig` (in `config`) what it
builds from `[mcp.<name>]`; `to_spec` / `Hints` (in `specs`) how a server's tool becomes a judged
`Spec`. Importing this package does not import the SDK.
"""

from yagent.tools.mcp.config import McpConfigError, ServerConfig
from yagent.tools.mcp.connect import NoServers, Servers, connect
from yagent.tools.mcp.content import render_content
from yagent.tools.mcp.specs import Hints, spec_name, to_spec
from yagent.tools.mcp.status import ServerStatus

__all__ = [
    "Hints",
    "McpConfigError",
    "NoServers",
    "ServerConfig",
    "ServerStatus",
    "Servers",
    "connect",
    "render_content",
    "spec_name",
    "to_spec",
]
