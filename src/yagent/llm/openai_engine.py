"""OpenAIEngine: the OpenAI-compatible chat-completions engine (streaming, directly on httpx).

One wire protocol covers OpenAI, Ollama, vLLM, the llama.cpp server, DeepSeek and OpenRouter. The
engine speaks it itself — a JSON POST and a server-sent-event stream — rather than through the
`openai` SDK, which cost a run several times the rest of its start-up to import (see
docs/performance.md, "Start-up"); httpx is already loaded by the time a run asks its model.

Contract:
- A `Request` becomes one POST to `<base_url>/chat/completions` (`base_url`, else
  `OPENAI_BASE_URL`, else OpenAI's) with `Authorization: Bearer <key>`, `Accept` and
  `Content-Type: application/json`, `OpenAI-Organization` / `OpenAI-Project` from
  `OPENAI_ORG_ID` / `OPENAI_PROJECT_ID` when set, and the configured extra headers last. The body:
  the system prompt as the first message; our messages in OpenAI's shape (assistant messages carry
  `tool_calls`, tool results are `tool` messages with `tool_call_id`; a tool result's images,
  which tool messages cannot carry, follow the run of tool messages as one user message of
  labelled `image_url` data URLs); tool definitions as `{"type": "function", "function": …}`;
  the token limit (the request's, else the engine's) under `max_tokens` or
  `max_completion_tokens`; `temperature` when set; `stream: true` and
  `stream_options.include_usage`. Nothing unset is sent. The body is the bytes httpx's `json=`
  would send, built with each message of a growing conversation encoded once
  (`llm.openai_messages.BodyEncoder`): a step encodes its new messages, not the history.
- The stream is read as SSE (`yagent.llm.sse`) up to `data: [DONE]` (or the end of the body) and
  folded by `yagent.llm.openai_stream` (text, reasoning, tool calls by index, usage, the
  finish_reason that must arrive). A provider that answers with one plain JSON chat completion
  (`content-type: application/json`) is accepted and announced as the same events; JSON that is
  not a chat completion is an error quoting its start. An HTML page in answer (`text/html`,
  `application/xhtml+xml`: a captive portal, a base_url naming a web site) is an `unknown` error
  saying so, naming the base URL and quoting the page's first `PAGE_QUOTE` bytes.
- Every failure leaves as an `EngineError` (`yagent.llm.errors`): an HTTP status ≥ 400 by its
  status, with the provider's message; an `{"error": …}` object inside the stream by its type or
  code; a wait longer than `timeout` (connecting, or between any two reads — a stream that keeps
  producing is never cut off; bounding a whole run is the activity monitor's job) as `timeout`;
  a refused, dropped or broken connection as `transient`; data that is not JSON as
  `invalid_args`. The API key is redacted from every message.
- The engine never retries (a 429's `Retry-After` included): step retries belong to the loop
  (`yagent.llm.retry`). Redirects are followed (httpx drops the key on a cross-origin one).
- One pooled HTTP client per engine and event loop (an `anyio.lowlevel.RunVar`), so sequential
  and concurrent requests reuse connections and an engine may serve successive event loops (a
  connection never crosses loops); an `http://` base URL's client loads no CA bundle unless a
  redirect leads it to TLS (`yagent.llm.tls`). After `[DONE]` the body's tail is read for at most
  `DRAIN_LIMIT` seconds so its connection goes back to the pool. Clients are not closed
  explicitly: they live as long as their loop.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Mapping
from typing import Any, Literal

import anyio
import anyio.lowlevel
import httpx

from yagent.kernel.judge import toolfail
from yagent.llm import sse, tls
from yagent.llm.errors import to_engine_error
from yagent.llm.openai_messages import BodyEncoder, wire_messages
from yagent.llm.openai_stream import PROVIDER, Assembler, is_completion
from yagent.llm.types import (
    EngineError,
    Request,
    StreamEvent,
    TurnDone,
)

DEFAULT_TIMEOUT = 120.0
DEFAULT_BASE_URL = "https://api.openai.com/v1"
DRAIN_LIMIT = 0.1  # seconds spent reading a body's tail after [DONE] to keep its connection
PAGE_QUOTE = 200  # bytes of an HTML page quoted in the error
_HTML = frozenset({"text/html", "application/xhtml+xml"})
_NO_KEY = "no-key"  # local OpenAI-compatible servers (Ollama, llama.cpp) ignore the key

TokenLimitParam = Literal["max_tokens", "max_completion_tokens"]
STREAMING = {"stream": True, "stream_options": {"include_usage": True}}
_JSON = {"content-type": "application/json"}


def tool_def(tool: Mapping[str, Any]) -> dict[str, Any]:
    """One of our tool definitions in OpenAI's function format."""
    function: dict[str, Any] = {"name": tool["name"]}
    if tool.get("description"):
        function["description"] = tool["description"]
    function["parameters"] = tool.get("parameters") or {"type": "object", "properties": {}}
    return {"type": "function", "function": function}


class ProviderFailure(Exception):
    """An error status or an error object inside the stream, in the shape `to_engine_error` reads
    (`status_code`, `body`)."""

    def __init__(self, message: str, *, body: object, status_code: int | None = None) -> None:
        super().__init__(message)
        self.body = body
        self.status_code = status_code


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
        token_limit_param: TokenLimitParam = "max_tokens",
        max_tokens: int | None = None,
    ) -> None:
        self._model = model
        self._max_tokens = max_tokens  # sent when the request sets none ([llm] max_tokens)
        self._limit_param = token_limit_param
        key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
        if not key:
            if base_url is None:
                raise EngineError(
                    toolfail.Kind.UNAUTHORIZED,
                    f"{PROVIDER} model {model!r}: no API key: set OPENAI_API_KEY or "
                    "configure a base_url for a local server",
                )
            key = _NO_KEY
        self._secret = key
        base = base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL
        self._base = base.rstrip("/")
        self._url = self._base + "/chat/completions"
        headers = {
            "authorization": f"Bearer {key}",
            "accept": "application/json",
            "user-agent": "yagent",
        }
        for header, variable in (
            ("openai-organization", "OPENAI_ORG_ID"),
            ("openai-project", "OPENAI_PROJECT_ID"),
        ):
            if value := os.environ.get(variable):
                headers[header] = value
        self._headers = headers | dict(extra_headers or {})
        self._timeout = timeout
        self._clients: anyio.lowlevel.RunVar[httpx.AsyncClient] = anyio.lowlevel.RunVar(
            f"openai-engine-{id(self)}"
        )
        self._bodies = BodyEncoder()  # each message of a growing conversation encoded once

    @property
    def model(self) -> str:
        return self._model

    def params(self, request: Request) -> dict[str, Any]:
        """The request body sent for `request` (without the streaming switches)."""
        return {
            "model": request.model or self._model,
            "messages": wire_messages(request),
            **self._fields(request),
        }

    def _fields(self, request: Request) -> dict[str, Any]:
        """The body's fields after the messages (without the streaming switches)."""
        body: dict[str, Any] = {}
        if request.tools:
            body["tools"] = [tool_def(t) for t in request.tools]
        limit = request.max_tokens if request.max_tokens is not None else self._max_tokens
        if limit is not None:
            body[self._limit_param] = limit
        if request.temperature is not None:
            body["temperature"] = request.temperature
        return body

    def _client(self) -> httpx.AsyncClient:
        """This event loop's pooled client for this engine (see the module docstring)."""
        try:
            return self._clients.get()
        except LookupError:
            client = httpx.AsyncClient(
                headers=self._headers,
                timeout=self._timeout,
                follow_redirects=True,
                verify=tls.for_url(self._base),  # no CA bundle loaded for an http:// server
            )
            self._clients.set(client)
            return client

    async def stream(self, request: Request) -> AsyncIterator[StreamEvent]:
        await anyio.lowlevel.checkpoint()  # cancellation is honoured before answering
        model = request.model or self._model
        fields = {"model": model, **self._fields(request), **STREAMING}
        assembler = Assembler()
        try:
            body = self._bodies.encode(request, fields)  # what `json=` sends, built incrementally
            post = self._client().stream("POST", self._url, content=body, headers=_JSON)
            async with post as response:
                if response.status_code >= 400:
                    raise _status_failure(response.status_code, await response.aread())
                kind = _media_type(response.headers.get("content-type"))
                if kind in _HTML:
                    raise await self._html_page(response, kind, model)
                if kind == "application/json":
                    completion = _completion(await response.aread(), model)
                    for event in assembler.whole(completion):
                        yield event
                else:
                    async for chunk in _chunks(response):
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
                timeout_types=(httpx.TimeoutException,),
                connection_types=(httpx.TransportError,),
                secret=self._secret,
                url=self._base,
            ) from exc
        yield TurnDone(turn)

    async def _html_page(self, response: httpx.Response, kind: str, model: str) -> EngineError:
        """A web page in answer (a captive portal, a base_url naming a site): said, with its
        first bytes — never read as an event stream that then 'ended before the model finished'."""
        start = bytearray()
        async for part in response.aiter_bytes():
            start += part
            if len(start) >= PAGE_QUOTE:
                break
        quoted = " ".join(start[:PAGE_QUOTE].decode("utf-8", "replace").split())
        return EngineError(
            toolfail.Kind.UNKNOWN,
            f"{PROVIDER} model {model!r}: the server at {self._base} answered with an HTML page "
            f"(content-type {kind}), not an event stream or JSON — is base_url the API's address "
            f"(often ending in /v1), and is the network behind a sign-in page? It began: "
            f"{quoted!r}",
        )


async def _chunks(response: httpx.Response) -> AsyncIterator[Mapping[str, Any]]:
    """The JSON chunks of an SSE body, up to `[DONE]`; an error object raises."""
    body = response.aiter_bytes()
    async for event in sse.events(body):
        if event.data.startswith("[DONE]"):
            await _drain(body)
            return
        try:
            chunk = json.loads(event.data)
        except ValueError:
            raise ValueError(
                "stream data that is not JSON (is base_url an OpenAI-compatible API?): "
                f"{event.data[:200]!r}"
            ) from None
        if not isinstance(chunk, Mapping):
            continue
        error = chunk.get("error")
        if error:
            message = error.get("message") if isinstance(error, Mapping) else None
            text = message if isinstance(message, str) and message else "error in the stream"
            raise ProviderFailure(text, body=error)
        yield chunk


async def _drain(body: AsyncIterator[bytes]) -> None:
    """Read what follows `[DONE]` (the body's end) so the connection returns to the pool; a body
    that does not end within `DRAIN_LIMIT` seconds, or fails, is closed instead."""
    with anyio.move_on_after(DRAIN_LIMIT):
        try:
            async for _ in body:
                pass
        except (httpx.TransportError, httpx.StreamError):
            pass  # the turn is complete: a failing tail only costs the connection


def _status_failure(status: int, raw: bytes) -> ProviderFailure:
    text = raw.decode("utf-8", "replace").strip()
    try:
        body: object = json.loads(text)
    except ValueError:
        body = None
    return ProviderFailure(
        text or f"HTTP {status} with an empty body", body=body, status_code=status
    )


def _media_type(content_type: str | None) -> str:
    return (content_type or "").split(";")[0].strip().lower()


def _completion(raw: bytes, model: str) -> Mapping[str, Any]:
    """A whole chat completion sent in answer to a streamed request, or an error quoting it."""
    try:
        completion: object = json.loads(raw)
    except ValueError:
        completion = None
    if is_completion(completion):
        return completion
    start = raw[:200].decode("utf-8", "replace")
    raise EngineError(
        toolfail.Kind.UNKNOWN,
        f"{PROVIDER} model {model!r}: the server answered the streamed request with JSON "
        f"that is not a chat completion: {start!r}",
    )
