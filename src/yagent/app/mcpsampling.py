"""MCP sampling through the session's engine: the host side of `tools.mcp.inbound.Sampler`.

Contract:
- A server's sampling request (already judged and approved by `tools.mcp.inbound`) becomes one
  model request with the server's system prompt and messages only — no yagent context, no tools —
  on the session's engine, bounded by the request's token cap.
- Its usage and cost are recorded in the session like any model turn (agent "<agent>/mcp:<server>").
- A failed model call raises; `inbound` answers the server with the error and the run goes on.
"""

from __future__ import annotations

from collections.abc import Callable

from yagent.llm import Message
from yagent.llm.types import AssistantTurn, Engine, Request, complete
from yagent.tools.mcp.sampling import Sampler, SampleReply, SampleRequest


def sampler(engine: Engine, agent: str, account: Callable[[str, AssistantTurn], None]) -> Sampler:
    async def sample(request: SampleRequest) -> SampleReply:
        messages = tuple(
            Message("assistant", text) if role == "assistant" else Message("user", text)
            for role, text in request.messages
        )
        who = f"{agent}/mcp:{request.server}"
        turn = await complete(
            engine,
            Request(
                request.system,
                messages,
                max_tokens=request.max_tokens,
                temperature=request.temperature,
                agent=who,
            ),
        )
        account(who, turn)
        return SampleReply(turn.text, turn.model or engine.model)

    return sample
