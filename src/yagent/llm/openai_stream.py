"""Chat-completion chunks (OpenAI-compatible, as parsed JSON) folded into events and one turn.

Contract:
- `Assembler.feed` takes one `chat.completion.chunk` object and yields the events it carries:
  answer text as `TextDelta`; reasoning (`reasoning_content` from DeepSeek / vLLM, `reasoning`
  from OpenRouter / Ollama) as `TextDelta(channel="reasoning")`, never part of the turn's text;
  `ToolCallStarted` once per tool call, when its name first arrives. Parallel tool calls are
  assembled from their deltas by `index` (a call keeps its first id and first name); servers that
  omit the index send each call whole, and a part with a new id is then a new call. `refusal`
  deltas are not answer text. The last `finish_reason` and the last `usage` object win.
- `Assembler.whole` reads a non-streamed `chat.completion` (first choice) as the same events.
- `Assembler.finish` returns the turn, or raises `EngineError`: `transient` when no
  `finish_reason` arrived (a stream cut short is never a silently short turn), `unknown` when a
  tool call has no name. Empty argument text becomes `"{}"`; a call without an id gets one.
- Usage is normalised: `input_tokens` counts the *uncached* prompt tokens, `cache_read_tokens` the
  cached ones (`prompt_tokens_details.cached_tokens`, or DeepSeek's `prompt_cache_hit_tokens`).
- Fields of unexpected types are ignored as if absent (a wrong-typed count reads as 0): the
  finish_reason and name checks above decide whether what remains is a turn.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeGuard

from yagent.kernel.judge import toolfail
from yagent.llm.types import (
    AssistantTurn,
    EngineError,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolCallStarted,
    Usage,
)

PROVIDER = "openai-compatible"


def _count(value: object) -> int:
    if isinstance(value, bool):
        return 0
    if isinstance(value, int | float):
        return max(0, int(value))
    return 0


def _object(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def normalise_usage(usage: Mapping[str, Any]) -> Usage:
    """OpenAI usage → ours: prompt tokens split into uncached input and cache reads."""
    prompt = _count(usage.get("prompt_tokens"))
    output = _count(usage.get("completion_tokens"))
    cached = _count(_object(usage.get("prompt_tokens_details")).get("cached_tokens"))
    if not cached:
        cached = _count(usage.get("prompt_cache_hit_tokens"))  # DeepSeek
    cached = min(cached, prompt)
    return Usage(input_tokens=prompt - cached, output_tokens=output, cache_read_tokens=cached)


def is_completion(body: object) -> TypeGuard[Mapping[str, Any]]:
    """Whether `body` is a chat completion: a list of choices, each with a message object."""
    choices = body.get("choices") if isinstance(body, Mapping) else None
    return isinstance(choices, list) and all(
        isinstance(choice, Mapping) and isinstance(choice.get("message"), Mapping)
        for choice in choices
    )


@dataclass
class _PendingCall:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


@dataclass
class Assembler:
    """Folds a stream of chunks into events and, at the end, the complete turn."""

    text: list[str] = field(default_factory=list)
    calls: dict[int, _PendingCall] = field(default_factory=dict)
    finish_reason: str | None = None
    usage: Usage = field(default_factory=Usage)

    def feed(self, chunk: Mapping[str, Any]) -> Iterator[StreamEvent]:
        usage = chunk.get("usage")
        if isinstance(usage, Mapping):
            self.usage = normalise_usage(usage)
        choices = chunk.get("choices")
        for choice in choices if isinstance(choices, list) else ():
            yield from self._choice(_object(choice), "delta")

    def whole(self, completion: Mapping[str, Any]) -> Iterator[StreamEvent]:
        """A non-streamed completion, announced as the events its stream would have carried."""
        usage = completion.get("usage")
        if isinstance(usage, Mapping):
            self.usage = normalise_usage(usage)
        for choice in completion["choices"][:1]:
            yield from self._choice(choice, "message")

    def _choice(self, choice: Mapping[str, Any], key: str) -> Iterator[StreamEvent]:
        yield from self._delta(_object(choice.get(key)))
        finish = choice.get("finish_reason")
        if finish and isinstance(finish, str):
            self.finish_reason = finish

    def _delta(self, delta: Mapping[str, Any]) -> Iterator[StreamEvent]:
        reasoning = _text(delta.get("reasoning_content")) or _text(delta.get("reasoning"))
        if reasoning:
            yield TextDelta(reasoning, channel="reasoning")
        content = _text(delta.get("content"))
        if content:
            self.text.append(content)
            yield TextDelta(content)
        parts = delta.get("tool_calls")
        for part in parts if isinstance(parts, list) else ():
            yield from self._tool_part(_object(part))

    def _tool_part(self, part: Mapping[str, Any]) -> Iterator[StreamEvent]:
        index = part.get("index")
        call_id = _text(part.get("id"))
        if not isinstance(index, int) or isinstance(index, bool):
            # Servers that omit the index send each call whole: a new id is a new call.
            last = max(self.calls, default=-1)
            index = last + 1 if call_id or last < 0 else last
        pending = self.calls.setdefault(index, _PendingCall())
        if call_id and not pending.id:
            pending.id = call_id
        function = part.get("function")
        if not isinstance(function, Mapping):
            return
        name = _text(function.get("name"))
        if name and not pending.name:
            pending.name = name
            yield ToolCallStarted(index, pending.id, pending.name)
        arguments = _text(function.get("arguments"))
        if arguments:
            pending.arguments.append(arguments)

    def finish(self, model: str) -> AssistantTurn:
        if self.finish_reason is None:
            raise EngineError(
                toolfail.Kind.TRANSIENT,
                f"{PROVIDER} model {model!r}: the stream ended before the model finished "
                "(no finish_reason)",
            )
        calls: list[ToolCall] = []
        for position, index in enumerate(sorted(self.calls)):
            pending = self.calls[index]
            if not pending.name:
                raise EngineError(
                    toolfail.Kind.UNKNOWN,
                    f"{PROVIDER} model {model!r}: tool call #{position} arrived without a name",
                )
            call_id = pending.id or f"call_{uuid.uuid4().hex[:24]}"
            calls.append(ToolCall(call_id, pending.name, "".join(pending.arguments) or "{}"))
        return AssistantTurn(
            "".join(self.text), tuple(calls), self.usage, self.finish_reason, model
        )
