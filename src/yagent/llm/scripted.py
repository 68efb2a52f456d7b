"""ScriptedEngine: a deterministic model for tests and demos.

Contract:
- Scripts are dispatched by *agent identity*, recognised from the system prompt (the first
  identity whose marker occurs in the prompt's first line), never by a global call counter — the
  loop's compensating requests (reminders, retries) must not shift another agent's script.
- Each identity's script is a list of steps: an `AssistantTurn`, or a function of the `Request`
  returning one (for answers that depend on what the tools returned).
- It checks for cancellation before answering (an engine that ignores cancellation hides bugs),
  streams the text in small deltas, then one `TurnDone`.
- An exhausted script or an unrecognised prompt is an `EngineError` naming the identity.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field

import anyio

from yagent.kernel.judge import toolfail
from yagent.llm.identity import identify
from yagent.llm.types import (
    AssistantTurn,
    EngineError,
    Request,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolCallStarted,
    TurnDone,
    Usage,
)

Step = AssistantTurn | Callable[[Request], AssistantTurn]


def say(text: str) -> AssistantTurn:
    return AssistantTurn(text=text, usage=Usage(10, max(1, len(text) // 4)), stop_reason="stop")


def call(name: str, arguments: str = "{}", *, call_id: str = "", text: str = "") -> AssistantTurn:
    cid = call_id or f"call_{name}"
    return calls([(name, arguments, cid)], text=text)


def calls(items: Sequence[tuple[str, str, str]], *, text: str = "") -> AssistantTurn:
    tool_calls = tuple(ToolCall(cid, name, args) for name, args, cid in items)
    return AssistantTurn(text, tool_calls, Usage(10, 5), "tool_calls")


@dataclass
class ScriptedEngine:
    scripts: Mapping[str, Sequence[Step]]
    markers: Mapping[str, str] = field(default_factory=dict)  # identity -> marker text
    model_name: str = "scripted"
    requests: list[tuple[str, Request]] = field(default_factory=list)
    _cursor: dict[str, int] = field(default_factory=dict)

    @property
    def model(self) -> str:
        return self.model_name

    def identity(self, request: Request) -> str:
        return identify(request.system, self.scripts, self.markers, who="scripted engine")

    def remaining(self, identity: str) -> int:
        return len(self.scripts.get(identity, ())) - self._cursor.get(identity, 0)

    async def stream(self, request: Request) -> AsyncIterator[StreamEvent]:
        await anyio.lowlevel.checkpoint()  # cancellation is honoured before answering
        ident = self.identity(request)
        script = self.scripts[ident]
        index = self._cursor.get(ident, 0)
        if index >= len(script):
            raise EngineError(
                toolfail.Kind.INTERNAL, f"scripted engine: script for {ident!r} is exhausted"
            )
        self._cursor[ident] = index + 1
        self.requests.append((ident, request))
        step = script[index]
        turn = step(request) if callable(step) else step
        for i in range(0, len(turn.text), 16):
            yield TextDelta(turn.text[i : i + 16])
        for i, tool_call in enumerate(turn.tool_calls):
            yield ToolCallStarted(i, tool_call.id, tool_call.name)
        yield TurnDone(
            AssistantTurn(turn.text, turn.tool_calls, turn.usage, turn.stop_reason, self.model)
        )
