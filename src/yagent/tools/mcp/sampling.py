"""What a host gives MCP servers' sampling requests, without the SDK.

`SAMPLER_KEY` is the slot of the host's `Sampler` in `ToolContext.services`; a `Sampler` turns one
`SampleRequest` (a server's system prompt and messages, already judged and approved by
`tools.mcp.inbound`) into a `SampleReply`. Kept apart from `inbound` so that a host can wire its
sampler on every run without loading the `mcp` SDK when no server is configured.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from yagent.tools.invocation import Slot


@dataclass(frozen=True, slots=True)
class SampleRequest:
    server: str
    system: str
    messages: tuple[tuple[str, str], ...]  # (role, text), roles "user" / "assistant"
    max_tokens: int
    temperature: float | None = None


@dataclass(frozen=True, slots=True)
class SampleReply:
    text: str
    model: str
    stop_reason: str = "endTurn"


Sampler = Callable[[SampleRequest], Awaitable[SampleReply]]
SAMPLER_KEY: Slot[Sampler] = Slot("mcp_sampler")  # the host's Sampler in ToolContext.services
