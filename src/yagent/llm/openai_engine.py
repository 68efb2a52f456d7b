"""OpenAIEngine: the OpenAI-compatible chat-completions engine (official `openai` SDK, streaming).

One wire protocol covers OpenAI, Ollama, vLLM, the llama.cpp server, DeepSeek and OpenRouter.

Contract:
- A `Request` becomes one streamed chat completion: the system prompt is the first message; our
  messages map to OpenAI's (assistant messages carry `tool_calls`, tool results are `tool`
  messages with `tool_call_id`; a tool result's images, which tool messages cannot carry, follow
  the run of tool messages as one user message of labelled `image_url` data URLs); tool
  definitions `{"name", "description", "parameters"}` become `{"type": "function",
  "function": …}`; `stream_options.include_usage` asks for usage.
- Answer text streams as `TextDelta`s; reasoning deltas (`reasoning_content` from DeepSeek / vLLM,
  `reasoning` from OpenRouter / Ollama) stream as `TextDelta(channel="reasoning")` and are not part
  of the turn's text. Parallel tool calls are assembled from their deltas by `index`; each is
  announced once with `ToolCallStarted` when its name arrives. Empty argument text becomes `"{}"`.
- Usage is normalised: `input_tokens` counts the *uncached* prompt tokens, `cache_read_tokens` the
  cached ones (`prompt_tokens_details.cached_tokens`, or DeepSeek's `prompt_cache_hit_tokens`).
- A stream that ends without a `finish_reason` is an error (`transient`), never a silently short
  turn. A provider that answers the streamed request with one plain JSON chat completion
  (`content-type: application/json`) is accepted: the completion is read whole and announced as
  the same events; JSON that is not a chat completion is an error quoting its start. Every SDK
  or transport exception leaves as an `EngineError` (see `yagent.llm.errors`).
- The SDK never retries (`max_retries=0`): step retries belong to the loop. `timeout` bounds each
  network wait (connect, every read); a stream that keeps producing is not cut off — bounding a
  whole run is the activity monitor's job.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, cast

import anyio
import httpx2
import openai
import pydantic
from openai.types.chat import ChatCompletion, ChatCompletionChunk

from yagent.kernel.judge import toolfail
from yagent.llm.errors import to_engine_error
from yagent.llm.types import (
    AssistantTurn,
    EngineError,
    Image,
    Message,
    Request,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolCallStarted,
    TurnDone,
    Usage,
)

DEFAULT_TIMEOUT = 120.0
PROVIDER = "openai-compatible"
_NO_KEY = "no-key"  # local OpenAI-compatible servers (Ollama, llama.cpp) ignore the key

TokenLimitParam = Literal["max_tokens", "max_completion_tokens"]


def tool_def(tool: Mapping[str, Any]) -> dict[str, Any]:
    """One of our tool definitions in OpenAI's function format."""
    function: dict[str, Any] = {"name": tool["name"]}
    if tool.get("description"):
        function["description"] = tool["description"]
    function["parameters"] = tool.get("parameters") or {"type": "object", "properties": {}}
    return {"type": "function", "function": function}


def wire_message(message: Message) -> dict[str, Any]:
    """One of our messages as an OpenAI chat message."""
    if message.role == "tool":
        return {"role": "tool", "tool_call_id": message.tool_call_id, "content": message.content}
    if message.role == "assistant" and message.tool_calls:
        return {
            "role": "assistant",
            "content": message.content or None,
            "tool_calls": [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments or "{}"},
                }
                for call in message.tool_calls
            ],
        }
    return {"role": message.role, "content": message.content}


def _data_url(image: Image) -> str:
    return f"data:{image.mime};base64,{image.data}"


def wire_messages(request: Request) -> list[dict[str, Any]]:
    """Chat messages; images of tool results follow the run of tool messages as one user
    message of image parts (tool messages carry text only), each image named by its call."""
    out: list[dict[str, Any]] = (
        [{"role": "system", "content": request.system}] if request.system else []
    )
    images: list[dict[str, Any]] = []
    for message in request.messages:
        if message.role != "tool" and images:
            out.append({"role": "user", "content": images})
            images = []
        out.append(wire_message(message))
        for index, image in enumerate(message.images, 1):
            label = f"image {index} returned by tool call {message.tool_call_id} ({message.name})"
            images += [
                {"type": "text", "text": label},
                {
                    "type": "image_url",
                    "image_url": {"url": f"data:{image.mime};base64,{image.data}"},
                },
            ]
    if images:
        out.append({"role": "user", "content": images})
    return out


def normalise_usage(usage: Any) -> Usage:
    """OpenAI usage → ours: prompt tokens split into uncached input and cache reads."""
    prompt = int(getattr(usage, "prompt_tokens", 0) or 0)
    output = int(getattr(usage, "completion_tokens", 0) or 0)
    details = getattr(usage, "prompt_tokens_details", None)
    cached = int(getattr(details, "cached_tokens", 0) or 0)
    if not cached:
        cached = int(getattr(usage, "prompt_cache_hit_tokens", 0) or 0)  # DeepSeek
    cached = min(cached, prompt)
    return Usage(input_tokens=prompt - cached, output_tokens=output, cache_read_tokens=cached)


@dataclass
class _PendingCall:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


@dataclass
class _Assembler:
    """Folds a stream of chunks into events and, at the end, the complete turn."""

    text: list[str] = field(default_factory=list)
    calls: dict[int, _PendingCall] = field(default_factory=dict)
    finish_reason: str | None = None
    usage: Usage = field(default_factory=Usage)

    def feed(self, chunk: ChatCompletionChunk) -> Iterator[StreamEvent]:
        if chunk.usage is not None:
            self.usage = normalise_usage(chunk.usage)
        for choice in chunk.choices or ():
            delta = choice.delta
            if delta is not None:
                yield from self._delta(delta)
            if choice.finish_reason:
                self.finish_reason = str(choice.finish_reason)

    def whole(self, completion: ChatCompletion) -> Iterator[StreamEvent]:
        """A non-streamed completion, announced as the events its stream would have carried."""
        if completion.usage is not None:
            self.usage = normalise_usage(completion.usage)
        for choice in completion.choices[:1]:
            yield from self._delta(choice.message)
            if choice.finish_reason:
                self.finish_reason = str(choice.finish_reason)

    def _delta(self, delta: Any) -> Iterator[StreamEvent]:
        reasoning = getattr(delta, "reasoning_content", None) or getattr(delta, "reasoning", None)
        if isinstance(reasoning, str) and reasoning:
            yield TextDelta(reasoning, channel="reasoning")
        if delta.content:
            self.text.append(delta.content)
            yield TextDelta(delta.content)
        for part in delta.tool_calls or ():
            yield from self._tool_part(part)

    def _tool_part(self, part: Any) -> Iterator[StreamEvent]:
        index = getattr(part, "index", None)
        if not isinstance(index, int):
            # Servers that omit the index send each call whole: a new id is a new call.
            last = max(self.calls, default=-1)
            index = last + 1 if part.id or last < 0 else last
        pending = self.calls.setdefault(index, _PendingCall())
        if part.id and not pending.id:
            pending.id = part.id
        function = part.function
        if function is None:
            return
        if function.name and not pending.name:
            pending.name = function.name
            yield ToolCallStarted(index, pending.id, pending.name)
        if function.arguments:
            pending.arguments.append(function.arguments)

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


class OpenAIEngine:
    """An `Engine` over any OpenAI-compatible chat-completions endpoint."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        extra_headers: Mapping[str, str] | None = None,
        client: openai.AsyncOpenAI | None = None,
        token_limit_param: TokenLimitParam = "max_tokens",
        max_tokens: int | None = None,
    ) -> None:
        self._model = model
        self._max_tokens = max_tokens  # sent when the request sets none ([llm] max_tokens)
        self._limit_param = token_limit_param
        if client is None:
            key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
            if not key:
                if base_url is None:
                    raise EngineError(
                        toolfail.Kind.UNAUTHORIZED,
                        f"{PROVIDER} model {model!r}: no API key: set OPENAI_API_KEY or "
                        "configure a base_url for a local server",
                    )
                key = _NO_KEY
            client = openai.AsyncOpenAI(
                api_key=key,
                base_url=base_url,
                timeout=timeout,
                max_retries=0,
                default_headers=dict(extra_headers) if extra_headers else None,
            )
        self._client = client
        self._secret = client.api_key if isinstance(client.api_key, str) else None

    @property
    def model(self) -> str:
        return self._model

    def params(self, request: Request) -> dict[str, Any]:
        """The request body sent for `request` (without the streaming switches)."""
        body: dict[str, Any] = {
            "model": request.model or self._model,
            "messages": wire_messages(request),
        }
        if request.tools:
            body["tools"] = [tool_def(t) for t in request.tools]
        limit = request.max_tokens if request.max_tokens is not None else self._max_tokens
        if limit is not None:
            body[self._limit_param] = limit
        if request.temperature is not None:
            body["temperature"] = request.temperature
        return body

    async def stream(self, request: Request) -> AsyncIterator[StreamEvent]:
        await anyio.lowlevel.checkpoint()  # cancellation is honoured before answering
        body = self.params(request)
        model = str(body["model"])
        assembler = _Assembler()
        try:
            chunks = await self._client.chat.completions.create(
                **cast(Any, body), stream=True, stream_options={"include_usage": True}
            )
            async with chunks:
                if _plain_json(chunks.response.headers.get("content-type")):
                    completion = _completion(await chunks.response.aread(), model)
                    for event in assembler.whole(completion):
                        yield event
                else:
                    async for chunk in chunks:
                        for event in assembler.feed(chunk):
                            yield event
            turn = assembler.finish(model)
        except EngineError:
            raise
        except Exception as exc:
            raise to_engine_error(
                exc,
                provider=PROVIDER,
                model=model,
                timeout_types=(openai.APITimeoutError, httpx2.TimeoutException),
                connection_types=(openai.APIConnectionError, httpx2.TransportError),
                secret=self._secret,
            ) from exc
        yield TurnDone(turn)


def _plain_json(content_type: str | None) -> bool:
    return (content_type or "").split(";")[0].strip().lower() == "application/json"


def _completion(raw: bytes, model: str) -> ChatCompletion:
    """A whole chat completion sent in answer to a streamed request, or an error quoting it."""
    try:
        return ChatCompletion.model_validate_json(raw)
    except pydantic.ValidationError:
        start = raw[:200].decode("utf-8", "replace")
        raise EngineError(
            toolfail.Kind.UNKNOWN,
            f"{PROVIDER} model {model!r}: the server answered the streamed request with JSON "
            f"that is not a chat completion: {start!r}",
        ) from None
