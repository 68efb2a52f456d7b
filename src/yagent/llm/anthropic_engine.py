"""AnthropicEngine: the Anthropic messages engine (official `anthropic` SDK, streaming).

Contract:
- A `Request` becomes one streamed POST to `/v1/messages` through the SDK's client (its headers,
  timeouts and errors): the body is the bytes `messages.create(**params(request), stream=True)`
  would send, built by `llm.anthropic_messages.BodyEncoder` with each message of a growing
  conversation encoded once (a step encodes its new messages, not the history). The system prompt
  goes in `system`; tool definitions `{"name", "description", "parameters"}` become `{"name",
  "description", "input_schema"}`. Our messages are regrouped into Anthropic's alternating turns:
  an assistant message becomes text + `tool_use` blocks (arguments parsed from their JSON text,
  repaired if needed; a non-object becomes `{}` — the tool layer already told the model its
  arguments were bad); consecutive tool results (and any user text after them) merge into ONE
  user message whose `tool_result` blocks come first, as the API requires (a result with images
  holds its text and base64 `image` blocks). Mid-conversation `system` messages become user text
  (the API has one system prompt). Assistant messages with no content are dropped (the API
  refuses empty content).
- Prompt caching: `cache_control: {"type": "ephemeral"}` breakpoints mark the stable prefix — the
  LAST tool definition (caches every tool) and the system prompt (caches tools + system) — and the
  last block of the last message, so each step of an agent loop re-reads the conversation so far
  from the cache instead of paying for it again (`cache_conversation=False` turns that one off).
  Three breakpoints; the API allows four.
- Text streams as `TextDelta`s, thinking as `TextDelta(channel="reasoning")`; `tool_use` blocks are
  announced with `ToolCallStarted` and their arguments assembled from `input_json_delta`s. Stop
  reasons are normalised to the neutral vocabulary (`stop`, `tool_calls`, `length`).
- Usage: `input_tokens` (uncached), `output_tokens`, `cache_read_input_tokens`,
  `cache_creation_input_tokens`, the latest value reported winning (`message_delta` may restate).
- A stream that ends before `message_stop` is an error (`transient`), never a silently short turn.
  Every SDK or transport exception leaves as an `EngineError` (see `yagent.llm.errors`); the SDK
  never retries (`max_retries=0`): step retries belong to the loop.
- `Request.temperature` is not sent: the messages API of this SDK generation has no sampling
  temperature (the SDK refuses the argument).
- Refused: extended thinking is not switched on here, because thinking blocks would have to be
  sent back signed and our `Message` does not carry them.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import anthropic
import anyio
import httpx2
from anthropic.types import Message as WireMessage
from anthropic.types import RawMessageStreamEvent

from yagent.kernel.judge import toolfail
from yagent.llm.anthropic_messages import BodyEncoder, system_blocks, tool_defs, wire_messages
from yagent.llm.errors import to_engine_error
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

DEFAULT_TIMEOUT = 120.0
DEFAULT_MAX_TOKENS = 8192
PROVIDER = "anthropic"
_NO_KEY = "no-key"  # a custom endpoint that takes no key

STOP_REASONS: Mapping[str, str] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
}


def _usage(raw: Any, base: Usage) -> Usage:
    """`base` updated with every count `raw` reports (a later report restates, not adds)."""

    def pick(attr: str, old: int) -> int:
        value = getattr(raw, attr, None)
        return int(value) if isinstance(value, int) else old

    return Usage(
        pick("input_tokens", base.input_tokens),
        pick("output_tokens", base.output_tokens),
        pick("cache_read_input_tokens", base.cache_read_tokens),
        pick("cache_creation_input_tokens", base.cache_write_tokens),
    )


@dataclass
class _Assembler:
    text: list[str] = field(default_factory=list)
    tools: dict[int, tuple[str, str, list[str]]] = field(default_factory=dict)  # id, name, json
    streamed: dict[int, bool] = field(default_factory=dict)
    usage: Usage = field(default_factory=Usage)
    stop_reason: str = ""
    stopped: bool = False

    def feed(self, event: Any) -> Iterator[StreamEvent]:
        kind = event.type
        if kind == "message_start":
            self.usage = _usage(event.message.usage, self.usage)
        elif kind == "content_block_start":
            block = event.content_block
            if block.type == "tool_use":
                # The API starts a block with `input: {}` and streams the JSON; a proxy that sends
                # the whole input up front is honoured too.
                initial = [json.dumps(block.input)] if block.input else []
                self.tools[event.index] = (block.id, block.name, initial)
                yield ToolCallStarted(len(self.tools) - 1, block.id, block.name)
            elif block.type == "text" and block.text:
                self.text.append(block.text)
                yield TextDelta(block.text)
        elif kind == "content_block_delta":
            yield from self._delta(event.index, event.delta)
        elif kind == "message_delta":
            self.stop_reason = event.delta.stop_reason or self.stop_reason
            self.usage = _usage(event.usage, self.usage)
        elif kind == "message_stop":
            self.stopped = True

    def _delta(self, index: int, delta: Any) -> Iterator[StreamEvent]:
        if delta.type == "text_delta":
            self.text.append(delta.text)
            yield TextDelta(delta.text)
        elif delta.type == "thinking_delta":
            yield TextDelta(delta.thinking, channel="reasoning")
        elif delta.type == "input_json_delta" and index in self.tools:
            parts = self.tools[index][2]
            if not self.streamed.get(index):
                parts.clear()  # streamed JSON replaces an up-front `input`
                self.streamed[index] = True
            parts.append(delta.partial_json)

    def finish(self, model: str) -> AssistantTurn:
        if not self.stopped:
            raise EngineError(
                toolfail.Kind.TRANSIENT,
                f"{PROVIDER} model {model!r}: the stream ended before message_stop",
            )
        calls = tuple(
            ToolCall(cid, name, "".join(parts) or "{}")
            for cid, name, parts in (self.tools[i] for i in sorted(self.tools))
        )
        stop = STOP_REASONS.get(self.stop_reason, self.stop_reason)
        return AssistantTurn("".join(self.text), calls, self.usage, stop, model)


class AnthropicEngine:
    """An `Engine` over the Anthropic messages API."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        client: anthropic.AsyncAnthropic | None = None,
        cache_conversation: bool = True,
    ) -> None:
        self._model = model
        self._max_tokens = max_tokens
        self._cache_conversation = cache_conversation
        if client is None:
            key = api_key if api_key is not None else os.environ.get("ANTHROPIC_API_KEY")
            if not key:
                if base_url is None:
                    raise EngineError(
                        toolfail.Kind.UNAUTHORIZED,
                        f"{PROVIDER} model {model!r}: no API key: set ANTHROPIC_API_KEY",
                    )
                key = _NO_KEY
            client = anthropic.AsyncAnthropic(
                api_key=key, base_url=base_url, timeout=timeout, max_retries=0
            )
        self._client = client
        self._secret = client.api_key
        self._bodies = BodyEncoder(cache_conversation=cache_conversation)

    @property
    def model(self) -> str:
        return self._model

    def params(self, request: Request) -> dict[str, Any]:
        """The request body sent for `request`, as the objects `messages.create` takes (without
        the streaming switch); `stream` sends it encoded by `BodyEncoder`, byte for byte what the
        SDK would send for these."""
        body: dict[str, Any] = {
            "model": request.model or self._model,
            "max_tokens": request.max_tokens or self._max_tokens,
            "messages": wire_messages(
                request.messages, cache_conversation=self._cache_conversation
            ),
        }
        if request.system:
            body["system"] = system_blocks(request.system)
        if request.tools:
            body["tools"] = tool_defs(request.tools)
        return body

    async def stream(self, request: Request) -> AsyncIterator[StreamEvent]:
        await anyio.lowlevel.checkpoint()  # cancellation is honoured before answering
        model = request.model or self._model
        limit = request.max_tokens or self._max_tokens
        assembler = _Assembler()
        try:
            # What `messages.create(**self.params(request), stream=True)` sends, each message of a
            # growing conversation encoded once, posted through the SDK's own client as is.
            body = self._bodies.encode(request, model=model, max_tokens=limit)
            events = await self._client.post(
                "/v1/messages",
                cast_to=WireMessage,
                content=body,
                stream=True,
                stream_cls=anthropic.AsyncStream[RawMessageStreamEvent],
            )
            async with events:
                async for event in events:
                    for out in assembler.feed(event):
                        yield out
            turn = assembler.finish(model)
        except EngineError:
            raise
        except Exception as exc:
            raise to_engine_error(
                exc,
                provider=PROVIDER,
                model=model,
                timeout_types=(anthropic.APITimeoutError, httpx2.TimeoutException),
                connection_types=(anthropic.APIConnectionError, httpx2.TransportError),
                secret=self._secret,
                url=str(self._client.base_url).rstrip("/"),
            ) from exc
        yield TurnDone(turn)
