"""Provider-neutral conversation types and the `Engine` protocol.

Contract: an engine takes a `Request` (system prompt, messages, tool definitions) and streams
`StreamEvent`s ending with exactly one `TurnDone` carrying the complete `AssistantTurn` (text, tool
calls with their raw argument text, usage, stop reason). A request naming a `model` is sent to
that model (an agent's own, `WithModel`); without one, to the engine's. Engines check for
cancellation before answering. Errors leave engines as `EngineError` carrying a
`toolfail.Kind`, so the loop decides retries from the failure table, never from
provider-specific exception types.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Protocol, runtime_checkable

from yagent.kernel.judge import toolfail

Role = Literal["system", "user", "assistant", "tool"]


@dataclass(frozen=True, slots=True)
class ToolCall:
    id: str
    name: str
    arguments: str  # the raw JSON text the model produced; parsed by the tool adapter


@dataclass(frozen=True, slots=True)
class Image:
    """An image a tool returned, for a model that accepts images (base64 `data`)."""

    mime: str
    data: str


@dataclass(frozen=True, slots=True)
class Message:
    role: Role
    content: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str = ""  # role == "tool": which call this answers
    name: str = ""  # role == "tool": the tool's name
    images: tuple[Image, ...] = ()  # role == "tool": images that go with the text

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.images:
            out["images"] = [{"mime": i.mime, "data": i.data} for i in self.images]
        if self.tool_calls:
            out["tool_calls"] = [
                {"id": c.id, "name": c.name, "arguments": c.arguments} for c in self.tool_calls
            ]
        if self.tool_call_id:
            out["tool_call_id"] = self.tool_call_id
        if self.name:
            out["name"] = self.name
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Message:
        calls = tuple(
            ToolCall(str(c["id"]), str(c["name"]), str(c.get("arguments", "")))
            for c in data.get("tool_calls", ()) or ()
        )
        images = tuple(Image(str(i["mime"]), str(i["data"])) for i in data.get("images", ()) or ())
        return cls(
            data["role"],
            str(data.get("content", "") or ""),
            calls,
            str(data.get("tool_call_id", "")),
            str(data.get("name", "")),
            images,
        )


@dataclass(frozen=True, slots=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_read_tokens + other.cache_read_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
        )

    def to_dict(self) -> dict[str, int]:
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_read_tokens": self.cache_read_tokens,
            "cache_write_tokens": self.cache_write_tokens,
        }


@dataclass(frozen=True, slots=True)
class AssistantTurn:
    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage = field(default_factory=Usage)
    stop_reason: str = ""
    model: str = ""

    def message(self) -> Message:
        return Message("assistant", self.text, self.tool_calls)


@dataclass(frozen=True, slots=True)
class Request:
    system: str
    messages: Sequence[Message]  # a tuple or a `history.Messages` view: neither ever changes
    tools: tuple[Mapping[str, Any], ...] = ()  # name-sorted tool definitions
    max_tokens: int | None = None
    temperature: float | None = None
    agent: str = ""  # the calling agent's identity (for logs and scripted engines)
    model: str = ""  # the model to ask; empty: the engine's own


@dataclass(frozen=True, slots=True)
class TextDelta:
    text: str
    channel: str = "answer"  # "answer" or "reasoning"


@dataclass(frozen=True, slots=True)
class ToolCallStarted:
    index: int
    id: str
    name: str


@dataclass(frozen=True, slots=True)
class TurnDone:
    turn: AssistantTurn


StreamEvent = TextDelta | ToolCallStarted | TurnDone


class EngineError(Exception):
    """A model call failed; `kind` is its `toolfail` classification."""

    def __init__(self, kind: toolfail.Kind, message: str) -> None:
        super().__init__(message)
        self.kind = kind

    @property
    def retryable(self) -> bool:
        return toolfail.retryable(self.kind)


@runtime_checkable
class Engine(Protocol):
    @property
    def model(self) -> str: ...

    def stream(self, request: Request) -> AsyncIterator[StreamEvent]: ...


@dataclass(frozen=True, slots=True)
class WithModel:
    """`engine`, asking `name` instead of its own model (an agent configured with its own)."""

    engine: Engine
    name: str

    @property
    def model(self) -> str:
        return self.name

    def stream(self, request: Request) -> AsyncIterator[StreamEvent]:
        return self.engine.stream(replace(request, model=self.name))


def with_model(engine: Engine, name: str) -> Engine:
    """`engine` asking `name`; `engine` itself when `name` is empty or already its model."""
    return WithModel(engine, name) if name and name != engine.model else engine


async def complete(engine: Engine, request: Request) -> AssistantTurn:
    """Run a stream to its end and return the turn; a stream without `TurnDone` is an error."""
    turn: AssistantTurn | None = None
    async for event in engine.stream(request):
        if isinstance(event, TurnDone):
            turn = event.turn
    if turn is None:
        raise EngineError(toolfail.Kind.INTERNAL, f"{engine.model}: stream ended without a turn")
    return turn


def tool_defs_of(tools: Sequence[Mapping[str, Any]]) -> tuple[Mapping[str, Any], ...]:
    return tuple(sorted(tools, key=lambda d: str(d.get("name", ""))))
