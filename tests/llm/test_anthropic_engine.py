"""AnthropicEngine through the real `anthropic` SDK against a local messages server."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from tests.llm.wire import (
    Reply,
    WireServer,
    an_block,
    an_delta,
    an_end,
    an_start,
    an_stop,
    anthropic_frames,
    pieces,
    refused_url,
)
from yagent.kernel.judge.toolfail import Kind
from yagent.llm.anthropic_engine import AnthropicEngine
from yagent.llm.anthropic_messages import wire_messages
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

KEY = "sk-ant-test-secret-0123456789"
EPH = {"type": "ephemeral"}
REQ = Request(system="You are the repo agent.", messages=(Message("user", "hi"),))


def engine(url: str, **kw: Any) -> AnthropicEngine:
    return AnthropicEngine("claude-test", base_url=url, api_key=KEY, **kw)


async def collect(eng: AnthropicEngine, request: Request = REQ) -> list[StreamEvent]:
    return [event async for event in eng.stream(request)]


START_USAGE = {
    "input_tokens": 21,
    "output_tokens": 1,
    "cache_read_input_tokens": 1000,
    "cache_creation_input_tokens": 300,
}


def text_events(text: str) -> list[dict[str, Any]]:
    events = [an_start(START_USAGE), an_block(0, {"type": "text", "text": ""})]
    events += [an_delta(0, {"type": "text_delta", "text": p}) for p in pieces(text, 4)]
    events += [an_stop(0), *an_end("end_turn", {"output_tokens": 9})]
    return events


@pytest.mark.anyio
async def test_text_streams_and_usage_includes_cache_reads_and_writes() -> None:
    with WireServer([Reply(events=anthropic_frames(text_events("Hello there")))]) as srv:
        events = await collect(engine(srv.url))
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["Hell", "o th", "ere"]
    done = events[-1]
    assert isinstance(done, TurnDone)
    assert done.turn.text == "Hello there"
    assert done.turn.stop_reason == "stop"
    assert done.turn.model == "claude-test"
    assert done.turn.usage == Usage(21, 9, 1000, 300)
    sent = srv.received[0]
    assert sent.path == "/v1/messages"
    assert sent.body["stream"] is True
    assert sent.body["max_tokens"] == 8192
    assert sent.body["model"] == "claude-test"


@pytest.mark.anyio
async def test_tool_use_is_assembled_from_input_json_deltas() -> None:
    a_args = json.dumps({"path": "README.md"})
    b_args = json.dumps({"command": "pytest -q", "timeout": 60})
    events = [
        an_start(),
        an_block(0, {"type": "text", "text": "Checking."}),
        an_stop(0),
        an_block(1, {"type": "tool_use", "id": "toolu_a", "name": "read_file", "input": {}}),
        *[an_delta(1, {"type": "input_json_delta", "partial_json": p}) for p in pieces(a_args, 3)],
        an_stop(1),
        an_block(2, {"type": "tool_use", "id": "toolu_b", "name": "run_bash", "input": {}}),
        *[an_delta(2, {"type": "input_json_delta", "partial_json": p}) for p in pieces(b_args, 5)],
        an_stop(2),
        an_block(3, {"type": "tool_use", "id": "toolu_c", "name": "noop", "input": {}}),
        an_stop(3),
        *an_end("tool_use", {"output_tokens": 40}),
    ]
    with WireServer([Reply(events=anthropic_frames(events))]) as srv:
        out = await collect(engine(srv.url))
    assert [e for e in out if isinstance(e, ToolCallStarted)] == [
        ToolCallStarted(0, "toolu_a", "read_file"),
        ToolCallStarted(1, "toolu_b", "run_bash"),
        ToolCallStarted(2, "toolu_c", "noop"),
    ]
    done = out[-1]
    assert isinstance(done, TurnDone)
    assert done.turn.text == "Checking."
    assert done.turn.tool_calls == (
        ToolCall("toolu_a", "read_file", a_args),
        ToolCall("toolu_b", "run_bash", b_args),
        ToolCall("toolu_c", "noop", "{}"),
    )
    assert done.turn.stop_reason == "tool_calls"
    assert done.turn.usage.output_tokens == 40


@pytest.mark.anyio
async def test_an_input_sent_up_front_is_kept_and_streamed_json_replaces_it() -> None:
    events = [
        an_start(),
        an_block(0, {"type": "tool_use", "id": "t1", "name": "a", "input": {"x": 1}}),
        an_stop(0),
        an_block(1, {"type": "tool_use", "id": "t2", "name": "b", "input": {"stale": True}}),
        an_delta(1, {"type": "input_json_delta", "partial_json": '{"y":'}),
        an_delta(1, {"type": "input_json_delta", "partial_json": " 2}"}),
        an_stop(1),
        *an_end("tool_use", {"output_tokens": 3}),
    ]
    with WireServer([Reply(events=anthropic_frames(events))]) as srv:
        turn = await complete(engine(srv.url), REQ)
    assert turn.tool_calls == (ToolCall("t1", "a", '{"x": 1}'), ToolCall("t2", "b", '{"y": 2}'))


@pytest.mark.anyio
async def test_thinking_streams_on_the_reasoning_channel_and_max_tokens_maps_to_length() -> None:
    events = [
        an_start(),
        an_block(0, {"type": "thinking", "thinking": "", "signature": ""}),
        an_delta(0, {"type": "thinking_delta", "thinking": "Let me see."}),
        an_delta(0, {"type": "signature_delta", "signature": "sig"}),
        an_stop(0),
        an_block(1, {"type": "text", "text": "Ans"}),
        an_delta(1, {"type": "text_delta", "text": "wer"}),
        an_stop(1),
        *an_end("max_tokens", {"output_tokens": 5}),
    ]
    with WireServer([Reply(events=anthropic_frames(events))]) as srv:
        out = await collect(engine(srv.url))
    deltas = [(e.channel, e.text) for e in out if isinstance(e, TextDelta)]
    assert deltas == [("reasoning", "Let me see."), ("answer", "Ans"), ("answer", "wer")]
    done = out[-1]
    assert isinstance(done, TurnDone)
    assert done.turn.text == "Answer"
    assert done.turn.stop_reason == "length"


CONVERSATION = (
    Message("user", "fix the bug"),
    Message(
        "assistant",
        "Reading two files.",
        (
            ToolCall("t1", "read_file", '{"path": "a.py"}'),
            ToolCall("t2", "read_file", "{'path': 'b.py'"),
        ),
    ),
    Message("tool", "A", tool_call_id="t1", name="read_file"),
    Message("tool", "B", tool_call_id="t2", name="read_file"),
    Message("user", "Reminder: finish with agent_exit."),
    Message("assistant", ""),  # an empty turn the API would refuse
    Message("system", "Budget: 3 steps left."),
    Message("assistant", "", (ToolCall("t3", "run", "[1, 2]"),)),
    Message("tool", "ran", tool_call_id="t3", name="run"),
)


@pytest.mark.anyio
async def test_tool_results_merge_into_one_user_message_and_cache_breakpoints_mark_the_prefix() -> (
    None
):
    tools = (
        {"name": "read_file", "description": "Read", "parameters": {"type": "object"}},
        {"name": "run", "parameters": {"type": "object", "properties": {"cmd": {}}}},
        {"name": "zzz"},
    )
    request = Request(system="SYSTEM", messages=CONVERSATION, tools=tools, temperature=0.0)
    with WireServer([Reply(events=anthropic_frames(text_events("ok")))]) as srv:
        await complete(engine(srv.url), request)
    body = srv.received[0].body
    assert body["system"] == [{"type": "text", "text": "SYSTEM", "cache_control": EPH}]
    assert body["tools"] == [
        {"name": "read_file", "description": "Read", "input_schema": {"type": "object"}},
        {"name": "run", "input_schema": {"type": "object", "properties": {"cmd": {}}}},
        {
            "name": "zzz",
            "input_schema": {"type": "object", "properties": {}},
            "cache_control": EPH,
        },
    ]
    assert "temperature" not in body  # this API generation has no sampling temperature
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "fix the bug"}]},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Reading two files."},
                {"type": "tool_use", "id": "t1", "name": "read_file", "input": {"path": "a.py"}},
                {"type": "tool_use", "id": "t2", "name": "read_file", "input": {"path": "b.py"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "A"},
                {"type": "tool_result", "tool_use_id": "t2", "content": "B"},
                {"type": "text", "text": "Reminder: finish with agent_exit."},
                {"type": "text", "text": "Budget: 3 steps left."},
            ],
        },
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t3", "name": "run", "input": {}}],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "t3", "content": "ran", "cache_control": EPH}
            ],
        },
    ]
    marked = json.dumps(body).count('"cache_control"')
    assert marked == 3  # tools, system, conversation: within the API's limit of four


def test_conversation_breakpoint_can_be_turned_off_and_tool_results_precede_text() -> None:
    messages = (Message("user", "before"), Message("tool", "r", tool_call_id="x"))
    turns = wire_messages(messages, cache_conversation=False)
    assert turns == [
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "x", "content": "r"},
                {"type": "text", "text": "before"},
            ],
        }
    ]
    assert wire_messages((), cache_conversation=True) == []


@pytest.mark.anyio
async def test_request_max_tokens_wins_and_no_system_or_tools_sends_no_breakpoint_for_them() -> (
    None
):
    request = Request(system="", messages=(Message("user", "hi"),), max_tokens=77)
    with WireServer([Reply(events=anthropic_frames(text_events("ok")))]) as srv:
        await complete(engine(srv.url, max_tokens=5), request)
    body = srv.received[0].body
    assert body["max_tokens"] == 77
    assert "system" not in body
    assert "tools" not in body
    assert "temperature" not in body


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("status", "etype", "kind"),
    [
        (429, "rate_limit_error", Kind.RATE_LIMITED),
        (503, "api_error", Kind.OVERLOADED),
        (529, "overloaded_error", Kind.OVERLOADED),
        (401, "authentication_error", Kind.UNAUTHORIZED),
        (400, "invalid_request_error", Kind.INVALID_ARGS),
    ],
)
async def test_http_errors_are_classified(status: int, etype: str, kind: Kind) -> None:
    body = {"type": "error", "error": {"type": etype, "message": f"nope, key {KEY} is bad"}}
    replies = [Reply(status, body=body), Reply(events=anthropic_frames(text_events("late")))]
    with WireServer(replies) as srv, pytest.raises(EngineError) as info:
        await complete(engine(srv.url), REQ)
    assert len(srv.received) == 1  # max_retries=0: step retries belong to the loop
    assert info.value.kind is kind
    text = str(info.value)
    assert "anthropic model 'claude-test'" in text
    assert f"HTTP {status}" in text
    assert KEY not in text


@pytest.mark.anyio
async def test_an_overload_reported_inside_the_stream_is_overloaded() -> None:
    events = [
        an_start(),
        {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
    ]
    with (
        WireServer([Reply(events=anthropic_frames(events))]) as srv,
        pytest.raises(EngineError) as info,
    ):
        await complete(engine(srv.url), REQ)
    assert info.value.kind is Kind.OVERLOADED
    assert "Overloaded" in str(info.value)


@pytest.mark.anyio
async def test_hangs_are_timeouts_before_and_during_the_stream() -> None:
    replies = [
        Reply(hang_after=0),
        Reply(events=anthropic_frames(text_events("abcdef")), hang_after=2),
    ]
    with WireServer(replies) as srv:
        eng = engine(srv.url, timeout=0.3)
        for _ in replies:
            with pytest.raises(EngineError) as info:
                await complete(eng, REQ)
            assert info.value.kind is Kind.TIMEOUT


@pytest.mark.anyio
async def test_refused_and_broken_connections_are_transient() -> None:
    with pytest.raises(EngineError) as info:
        await complete(engine(refused_url()), REQ)
    assert info.value.kind is Kind.TRANSIENT
    with (
        WireServer([Reply(events=anthropic_frames(text_events("abcdefgh")), drop_after=3)]) as srv,
        pytest.raises(EngineError) as info,
    ):
        await complete(engine(srv.url), REQ)
    assert info.value.kind is Kind.TRANSIENT


@pytest.mark.anyio
async def test_a_stream_that_ends_before_message_stop_is_an_error() -> None:
    frames = anthropic_frames(text_events("abcdefgh"))
    with WireServer([Reply(events=frames, end_after=3)]) as srv, pytest.raises(EngineError) as info:
        await complete(engine(srv.url), REQ)
    assert info.value.kind is Kind.TRANSIENT
    assert "message_stop" in str(info.value)


@pytest.mark.anyio
async def test_cancellation_is_honoured_before_any_request_is_sent() -> None:
    with WireServer([Reply(events=anthropic_frames(text_events("x")))]) as srv:
        with anyio.CancelScope() as scope:
            scope.cancel()
            await complete(engine(srv.url), REQ)
        assert scope.cancelled_caught
        assert srv.received == []


def test_no_key_and_no_base_url_is_unauthorized(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(EngineError) as info:
        AnthropicEngine("claude-test")
    assert info.value.kind is Kind.UNAUTHORIZED
    assert "ANTHROPIC_API_KEY" in str(info.value)


@pytest.mark.anyio
async def test_a_custom_endpoint_without_key_and_an_environment_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with WireServer([Reply(events=anthropic_frames(text_events("ok")))]) as srv:
        turn = await complete(AnthropicEngine("claude-x", base_url=srv.url), REQ)
    assert turn.text == "ok"
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-env")
    assert AnthropicEngine("claude-y").model == "claude-y"
