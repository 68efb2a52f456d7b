"""`ServerStatus`: what `yagent doctor` shows for one MCP server.

Contract: a plain value with no SDK behind it, so the host (`connect`) and the SDK client
(`client`) both name it without importing each other.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ServerStatus:
    """What `yagent doctor` shows for one server."""

    name: str
    where: str
    connected: bool
    tools: int
    protocol: str
    error: str
