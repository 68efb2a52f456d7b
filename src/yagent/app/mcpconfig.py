"""`[mcp.<name>]` tables of the configuration: one MCP server each.

Checked by `tools.mcp.ServerConfig` (one truth for what a server table may hold), so a table with
neither `command` nor `url`, both, a non-positive timeout or `headers` on a stdio server is a
configuration error (exit 2) naming the table, before anything starts.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator

from yagent.tools.mcp.config import McpConfigError, ServerConfig


class McpServer(BaseModel):
    """`[mcp.<name>]`: checked by `tools.mcp.ServerConfig` (one truth), so a table with neither
    `command` nor `url` is a configuration error (exit 2) before anything starts."""

    model_config = ConfigDict(extra="forbid")

    command: str | None = None
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] | None = None
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] | None = None  # HTTP only; ${NAME} is read from the environment
    startup_timeout: float | None = None  # seconds (default tools.mcp.config.STARTUP_TIMEOUT)
    tool_timeout: float | None = None  # idle seconds per call (default TOOL_TIMEOUT)
    sampling: bool | None = None  # the server may ask the session's model (default off)
    oauth: bool | None = None  # HTTP only: OAuth 2.1 + PKCE sign-in (tokens under YAGENT_HOME)

    @model_validator(mode="after")
    def _one_transport(self) -> McpServer:
        try:
            ServerConfig.from_mapping("server", self.model_dump(exclude_none=True))
        except McpConfigError as exc:  # pydantic reports ValueErrors with the table's path
            raise ValueError(str(exc).replace("mcp server 'server': ", "")) from None
        return self
