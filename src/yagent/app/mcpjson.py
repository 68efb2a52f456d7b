"""A repository's `.mcp.json` (Claude Code's project MCP servers), read at start behind trust.

Contract:
- The file is read once; its servers are mapped by `app.mcpsources` (a file that cannot be read
  as JSON is an `McpSourceError` naming the file and line: the configuration is refused).
- Its servers join the configuration only once the person trusted the file's exact content
  (`yagent trust`, like `.yagent/config.toml`); until then each mappable one is withheld as
  `mcp.<name>` and named in the start notice.
- yagent's own `[mcp.<name>]` wins on a name clash (said in a notice). A server that cannot be
  mapped is never loaded and the notice says why, trusted or not.
Leaves to the caller: hashing the content for trust, and connecting to the servers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from yagent.app import projectkeys
from yagent.app.mcpconfig import McpServer
from yagent.app.mcpsources import Found, read_claude
from yagent.app.trust import MCP_JSON, Status, digest


@dataclass(frozen=True, slots=True)
class DotMcp:
    """What `.mcp.json` holds: its bytes (None: no file) and its servers."""

    raw: bytes | None = None
    found: list[Found] = field(default_factory=list)


def read(workspace: Path) -> DotMcp:
    path = workspace / MCP_JSON
    if not path.is_file():
        return DotMcp()
    raw = path.read_bytes()
    return DotMcp(raw, read_claude(path, raw))


def digests(dot: DotMcp) -> dict[str, str]:
    """The file's digest for the trust records (none without a file)."""
    return {} if dot.raw is None else {MCP_JSON: digest(dot.raw)}


def apply(
    dot: DotMcp, status: Status | None, mcp: dict[str, McpServer], notices: list[str]
) -> list[projectkeys.Withheld]:
    """Add the trusted file's servers to `mcp` (yagent's own names win); the withheld ones
    otherwise. What cannot load is appended to `notices`."""
    held: list[tuple[str, Any]] = []
    for found in dot.found:
        if found.table is None:
            notices.append(f"{MCP_JSON}: MCP server {found.name} not loaded: {found.why}")
        elif found.name in mcp:
            notices.append(
                f"{MCP_JSON}: MCP server {found.name} not loaded: [mcp.{found.name}] in your "
                "configuration has the same name and wins"
            )
        elif status is Status.TRUSTED:
            mcp[found.name] = McpServer.model_validate(found.table)
        else:
            held.append((f"mcp.{found.name}", found.table))
    return projectkeys.withheld(MCP_JSON, status or Status.UNTRUSTED, held)
