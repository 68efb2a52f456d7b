"""OpenAIEngine (its own httpx client) against a local chat-completions server."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from tests.llm.wire import (
    Reply,
    WireServer,
    oa_chunk,
    openai_frames,
    pieces,
    text_frames,
    usage_chunk,
)
from yagent.kernel.judge.toolfail import Kind
from yagent.llm.openai_engine import OpenAIEngine
from yagent.llm.openai_stream import normalise_usage
from yagent.llm.types import (
    EngineError,
    Message,
    Request,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolCallStarted,
    TurnDone,
    Usage,
    complete,
)

KEY = "sk-test-secret-0123456789"
REQ = Request(system="You are the coding agent.", messages=(Message("user", "hi"),))


def engine(url: str, **kw: Any) -> OpenAIEngine:
    return OpenAIEngine("gpt-test", base_url=url, api_key=KEY, **kw)


async def collect(eng: OpenAIEngine, request: Request = REQ) -> list[StreamEvent]:
    return [event async for event in eng.stream(request)]


@pytest.mark.anyio
async def test_text_streams_in_deltas_and_ends_with_the_turn_and_usage() -> None:
    with WireServer([Reply(events=text_frames("Hello there"))]) as srv:
        events = await collect(engine(srv.url))
    deltas = [e.text for e in events if isinstance(e, TextDelta)]
    assert deltas == ["Hel", "lo ", "the", "re"]
    assert all(e.channel == "answer" for e in events if isinstance(e, TextDelta))
    done = events[-1]
    assert isinstance(done, TurnDone)
    assert sum(isinstance(e, TurnDone) for e in events) == 1
    assert done.turn.text == "Hello there"
    assert done.turn.stop_reason == "stop"
    assert done.turn.model == "gpt-test"
    assert done.turn.usage == Usage(input_tokens=7, output_tokens=4, cache_read_tokens=5)
    sent = srv.received[0]
    assert sent.path == "/chat/completions"
    assert sent.headers["authorization"] == f"Bearer {KEY}"
    assert sent.body["stream"] is True
    assert sent.body["stream_options"] == {"include_usage": True}
    assert sent.body["messages"][0] == {"role": "system", "content": "You are the coding agent."}
    assert sent.body["model"] == "gpt-test"


def tool_delta(index: int, *, cid: str = "", name: str = "", args: str = "") -> dict[str, Any]:
    part: dict[str, Any] = {"index": index, "function": {}}
    if cid:
        part["id"] = cid
        part["type"] = "function"
    if name:
        part["function"]["name"] = name
    if args:
        part["function"]["arguments"] = args
    return {"tool_calls": [part]}


@pytest.mark.anyio
async def test_parallel_tool_calls_are_assembled_by_index_from_interleaved_deltas() -> None:
    a_args = json.dumps({"path": "src/app.py", "start": 1})
    b_args = json.dumps({"pattern": "def main", "glob": "*.py"})
    chunks = [oa_chunk({"role": "assistant", "content": "Looking."})]
    chunks.append(oa_chunk(tool_delta(0, cid="call_a", name="read_file")))
    chunks.append(oa_chunk(tool_delta(1, cid="call_b", name="search")))
    a_parts, b_parts = list(pieces(a_args, 4)), list(pieces(b_args, 5))
    for i in range(max(len(a_parts), len(b_parts))):
        if i < len(b_parts):
            chunks.append(oa_chunk(tool_delta(1, args=b_parts[i])))
        if i < len(a_parts):
            chunks.append(oa_chunk(tool_delta(0, args=a_parts[i])))
    chunks += [oa_chunk({}, finish="tool_calls"), usage_chunk(30, 20)]
    with WireServer([Reply(events=openai_frames(chunks))]) as srv:
        events = await collect(engine(srv.url))
    started = [e for e in events if isinstance(e, ToolCallStarted)]
    assert started == [
        ToolCallStarted(0, "call_a", "read_file"),
        ToolCallStarted(1, "call_b", "search"),
    ]
    done = events[-1]
    assert isinstance(done, TurnDone)
    assert done.turn.tool_calls == (
        ToolCall("call_a", "read_file", a_args),
        ToolCall("call_b", "search", b_args),
    )
    assert done.turn.text == "Looking."
    assert done.turn.stop_reason == "tool_calls"
    assert done.turn.usage == Usage(30, 20)


@pytest.mark.anyio
async def test_reasoning_deltas_stream_on_the_reasoning_channel_only() -> None:
    chunks = [
        oa_chunk({"role": "assistant", "reasoning_content": "Think "}),
        oa_chunk({"reasoning_content": "hard."}),
        oa_chunk({"reasoning": "More."}),  # OpenRouter / Ollama spelling
        oa_chunk({"content": "Answer."}),
        oa_chunk({}, finish="stop"),
    ]
    with WireServer([Reply(events=openai_frames(chunks))]) as srv:
        events = await collect(engine(srv.url))
    reasoning = [e.text for e in events if isinstance(e, TextDelta) and e.channel == "reasoning"]
    answer = [e.text for e in events if isinstance(e, TextDelta) and e.channel == "answer"]
    assert reasoning == ["Think ", "hard.", "More."]
    assert answer == ["Answer."]
    done = events[-1]
    assert isinstance(done, TurnDone)
    assert done.turn.text == "Answer."
    assert done.turn.usage == Usage()  # this server sent no usage chunk


@pytest.mark.anyio
async def test_conversation_and_tools_are_sent_in_openai_shape() -> None:
    tools = (
        {"name": "read_file", "description": "Read a file", "parameters": {"type": "object"}},
        {"name": "noop"},
    )
    request = Request(
        system="sys",
        messages=(
            Message("user", "fix it"),
            Message(
                "assistant",
                "",
                (ToolCall("c1", "read_file", '{"path":"a"}'), ToolCall("c2", "noop", "")),
            ),
            Message("tool", "contents", tool_call_id="c1", name="read_file"),
            Message("tool", "ok", tool_call_id="c2", name="noop"),
            Message("assistant", "done"),
        ),
        tools=tools,
        max_tokens=256,
        temperature=0.2,
    )
    with WireServer([Reply(events=text_frames("x"))]) as srv:
        await complete(engine(srv.url), request)
    body = srv.received[0].body
    assert body["messages"] == [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "fix it"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "read_file", "arguments": '{"path":"a"}'},
                },
                {"id": "c2", "type": "function", "function": {"name": "noop", "arguments": "{}"}},
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "contents"},
        {"role": "tool", "tool_call_id": "c2", "content": "ok"},
        {"role": "assistant", "content": "done"},
    ]
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "read_file",
                "description": "Read a file",
                "parameters": {"type": "object"},
            },
        },
        {
            "type": "function",
            "function": {"name": "noop", "parameters": {"type": "object", "properties": {}}},
        },
    ]
    assert body["max_tokens"] == 256
    assert body["temperature"] == 0.2


@pytest.mark.anyio
async def test_token_limit_param_and_extra_headers_are_configurable() -> None:
    request = Request(system="", messages=(Message("user", "hi"),), max_tokens=9)
    with WireServer([Reply(events=text_frames("x"))]) as srv:
        eng = engine(
            srv.url, token_limit_param="max_completion_tokens", extra_headers={"X-Title": "yagent"}
        )
        await complete(eng, request)
    body = srv.received[0].body
    assert body["max_completion_tokens"] == 9
    assert "max_tokens" not in body
    assert body["messages"] == [{"role": "user", "content": "hi"}]  # no empty system message
    assert "tools" not in body
    assert srv.received[0].headers["x-title"] == "yagent"


@pytest.mark.anyio
async def test_tool_calls_without_index_or_id_are_still_complete_turns() -> None:
    whole = [
        {"id": "", "function": {"name": "ls", "arguments": "{}"}},
    ]
    second = [{"id": "c2", "function": {"name": "pwd", "arguments": ""}}]
    chunks = [
        oa_chunk({"tool_calls": whole}),
        oa_chunk({"tool_calls": second}),
        oa_chunk({"tool_calls": [{"function": {"arguments": ""}}]}),  # continues the last call
        oa_chunk({}, finish="tool_calls"),
    ]
    with WireServer([Reply(events=openai_frames(chunks))]) as srv:
        turn = await complete(engine(srv.url), REQ)
    first, other = turn.tool_calls
    assert first.name == "ls"
    assert first.id.startswith("call_")
    assert other == ToolCall("c2", "pwd", "{}")


@pytest.mark.anyio
async def test_a_tool_call_without_a_name_is_refused() -> None:
    chunks = [oa_chunk(tool_delta(0, cid="c1", args="{}")), oa_chunk({}, finish="tool_calls")]
    with (
        WireServer([Reply(events=openai_frames(chunks))]) as srv,
        pytest.raises(EngineError) as info,
    ):
        await complete(engine(srv.url), REQ)
    assert info.value.kind is Kind.UNKNOWN
    assert "without a name" in str(info.value)


@pytest.mark.anyio
async def test_cancellation_is_honoured_before_any_request_is_sent() -> None:
    with WireServer([Reply(events=text_frames("x"))]) as srv:
        with anyio.CancelScope() as scope:
            scope.cancel()
            await complete(engine(srv.url), REQ)
        assert scope.cancelled_caught
        assert srv.received == []


def test_no_key_and_no_base_url_is_unauthorized(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(EngineError) as info:
        OpenAIEngine("gpt-test")
    assert info.value.kind is Kind.UNAUTHORIZED
    assert "OPENAI_API_KEY" in str(info.value)


@pytest.mark.anyio
async def test_a_local_server_needs_no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with WireServer([Reply(events=text_frames("ok"))]) as srv:
        turn = await complete(OpenAIEngine("llama3", base_url=srv.url), REQ)
    assert turn.text == "ok"
    assert turn.model == "llama3"


def test_environment_key_is_used(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    assert OpenAIEngine("gpt-test").model == "gpt-test"


def test_usage_normalisation_handles_deepseek_cache_hits_and_never_goes_negative() -> None:
    deepseek = {"prompt_tokens": 100, "completion_tokens": 7, "prompt_cache_hit_tokens": 60}
    assert normalise_usage(deepseek | {"prompt_tokens_details": None}) == Usage(40, 7, 60, 0)
    odd = {
        "prompt_tokens": 3,
        "completion_tokens": 1,
        "prompt_tokens_details": {"cached_tokens": 9},
    }
    assert normalise_usage(odd) == Usage(0, 1, 3, 0)
    assert normalise_usage({"prompt_tokens": "many", "completion_tokens": True}) == Usage()


def plain_completion(message: dict[str, Any], finish: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-plain",
        "object": "chat.completion",
        "created": 1,
        "model": "gpt-test",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 9, "completion_tokens": 3, "total_tokens": 12},
    }


@pytest.mark.anyio
async def test_a_plain_json_answer_to_a_streamed_request_is_accepted() -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "read", "arguments": '{"p":1}'}}
    message = {"role": "assistant", "content": "Reading.", "tool_calls": [call]}
    with WireServer([Reply(body=plain_completion(message, "tool_calls"))]) as srv:
        events = await collect(engine(srv.url))
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["Reading."]
    assert [e.name for e in events if isinstance(e, ToolCallStarted)] == ["read"]
    done = events[-1]
    assert isinstance(done, TurnDone)
    assert done.turn.text == "Reading."
    assert done.turn.tool_calls == (ToolCall("c1", "read", '{"p":1}'),)
    assert done.turn.stop_reason == "tool_calls"
    assert done.turn.usage == Usage(input_tokens=9, output_tokens=3)


@pytest.mark.anyio
async def test_plain_json_that_is_not_a_completion_says_what_arrived() -> None:
    reply = Reply(body={"status": "ok", "note": "not a completion"})
    with WireServer([reply]) as srv, pytest.raises(EngineError, match=r"not a chat completion"):
        await collect(engine(srv.url))
