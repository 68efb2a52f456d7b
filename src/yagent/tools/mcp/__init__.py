"""External tools from MCP servers: configuration, specs, content, links and the client.

`connect.connect(servers)` is what the host enters — `client.McpTools` when servers are
configured, loading the `mcp` SDK then and only then; `config.ServerConfig` what it builds from
`[mcp.<name>]`; `specs.to_spec` / `specs.Hints` how a server's tool becomes a judged `Spec`;
`status.ServerStatus` what `yagent doctor` shows for one server.

Importing this package imports nothing: each name is imported from the module that defines it,
so reading an `[mcp.<name>]` table (`config`, standard library only) does not load the tool
adapter, the Surface or the tool specs that `connect` and `specs` need.
"""
