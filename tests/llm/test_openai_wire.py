"""OpenAIEngine at the wire: the exact request it sends, the SSE it reads, the errors it maps.

Every test runs the engine against `tests.llm.wire.WireServer` on loopback; what the server
received (path, headers, JSON body) and the events the engine produced are the evidence. These
pin what the engine did when it was built on the `openai` SDK, so the client underneath can
change without a provider noticing.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from tests.llm.test_openai_engine import KEY, engine
from tests.llm.wire import Reply, WireServer, oa_chunk, openai_frames, text_frames
from yagent.kernel.judge.toolfail import Kind
from yagent.llm.openai_engine import OpenAIEngine
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

REQ = Request(system="", messages=(Message("user", "hi"),))  # no system message in the body


async def collect(eng: OpenAIEngine, request: Request = REQ) -> list[StreamEvent]:
    return [event async for event in eng.stream(request)]


async def failure(reply: Reply, **kw: Any) -> EngineError:
    with WireServer([reply, Reply(events=text_frames("late"))]) as srv:
        with pytest.raises(EngineError) as info:
            await complete(engine(srv.url, **kw), REQ)
        assert len(srv.received) == 1  # never retried by the engine: the loop retries
    text = str(info.value)
    assert "openai-compatible" in text
    assert "'gpt-test'" in text
    assert KEY not in text
    return info.value


# -- the request -------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_the_request_is_a_json_post_with_the_bearer_key_and_the_streaming_switches() -> None:
    with WireServer([Reply(events=text_frames("x"))]) as srv:
        await complete(engine(srv.url), REQ)
    sent = srv.received[0]
    assert sent.path == "/chat/completions"
    assert sent.headers["authorization"] == f"Bearer {KEY}"
    assert sent.headers["content-type"] == "application/json"
    assert sent.headers["accept"] == "application/json"
    assert sent.body == {
        "model": "gpt-test",
        "messages": [{"role": "user", "content": "hi"}],
        "stream": True,
        "stream_options": {"include_usage": True},
    }  # nothing unset is sent: no tools, no token limit, no temperature


@pytest.mark.anyio
@pytest.mark.parametrize("suffix", ["/v1", "/v1/"])
async def test_the_path_is_joined_to_the_base_url(suffix: str) -> None:
    with WireServer([Reply(events=text_frames("x"))]) as srv:
        await complete(engine(srv.url + suffix), REQ)
    assert srv.received[0].path == "/v1/chat/completions"


@pytest.mark.anyio
async def test_the_request_model_and_the_engine_token_limit_are_sent() -> None:
    request = Request(system="s", messages=(Message("user", "hi"),), model="other-model")
    with WireServer([Reply(events=text_frames("x")), Reply(events=text_frames("y"))]) as srv:
        eng = engine(srv.url, max_tokens=77)
        turn = await complete(eng, request)
        await complete(eng, Request(system="", messages=(), max_tokens=5))
    first, second = (r.body for r in srv.received)
    assert first["model"] == "other-model"
    assert turn.model == "other-model"
    assert first["max_tokens"] == 77  # the engine's limit when the request sets none
    assert second["max_tokens"] == 5
    assert second["model"] == "gpt-test"


@pytest.mark.anyio
async def test_base_url_organization_and_project_come_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with WireServer([Reply(events=text_frames("x"))]) as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", f"{srv.url}/env")
        monkeypatch.setenv("OPENAI_ORG_ID", "org-1")
        monkeypatch.setenv("OPENAI_PROJECT_ID", "proj-1")
        await complete(OpenAIEngine("gpt-test", api_key=KEY), REQ)
    sent = srv.received[0]
    assert sent.path == "/env/chat/completions"
    assert sent.headers["openai-organization"] == "org-1"
    assert sent.headers["openai-project"] == "proj-1"


@pytest.mark.anyio
async def test_one_engine_reuses_its_connection_for_requests_one_after_another() -> None:
    replies = [Reply(events=text_frames(word), keep_alive=True) for word in ("one", "two", "3")]
    with WireServer(replies) as srv:
        eng = engine(srv.url)
        texts = [(await complete(eng, REQ)).text for _ in range(3)]
    assert texts == ["one", "two", "3"]
    assert len({r.peer for r in srv.received}) == 1  # one pooled keep-alive connection


def test_an_engine_serves_successive_event_loops() -> None:
    """A pooled connection belongs to the loop that opened it: the next loop opens its own."""
    replies = [Reply(events=text_frames(word), keep_alive=True) for word in ("one", "two")]
    with WireServer(replies) as srv:
        eng = engine(srv.url)
        texts = [anyio.run(complete, eng, REQ).text for _ in range(2)]
    assert texts == ["one", "two"]
    assert len({r.peer for r in srv.received}) == 2


# -- reading the stream ------------------------------------------------------------------------


def frame(chunk: dict[str, Any]) -> str:
    return f"data: {json.dumps(chunk)}\n\n"


@pytest.mark.anyio
async def test_sse_framing_comments_crlf_split_frames_and_fields_are_honoured() -> None:
    whole = frame(oa_chunk({"content": "split "}))
    frames = [
        ": keep-alive comment\n\n",
        "event: message\r\nid: 1\r\nretry: 100\r\n" + frame(oa_chunk({"content": "A "})),
        "data:" + json.dumps(oa_chunk({"content": "nospace "})) + "\r\n\r\n",
        whole[:17],  # one event cut in the middle of its JSON across two chunks
        whole[17:],
        frame(oa_chunk({"content": "B"})) + frame(oa_chunk({}, finish="stop")),  # two in one
        "data: [DONE]\n\n",
        "data: {not json, and never read}\n\n",
    ]
    with WireServer([Reply(events=frames)]) as srv:
        events = await collect(engine(srv.url))
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["A ", "nospace ", "split ", "B"]
    done = events[-1]
    assert isinstance(done, TurnDone)
    assert done.turn.text == "A nospace split B"


@pytest.mark.anyio
async def test_a_stream_that_ends_after_its_finish_reason_without_done_is_complete() -> None:
    frames = openai_frames([oa_chunk({"content": "ok"}), oa_chunk({}, finish="stop")], done=False)
    with WireServer([Reply(events=frames)]) as srv:
        turn = await complete(engine(srv.url), REQ)
    assert (turn.text, turn.stop_reason) == ("ok", "stop")


@pytest.mark.anyio
@pytest.mark.parametrize("finish", ["length", "content_filter", "tool_calls", "stop"])
async def test_the_finish_reason_is_the_stop_reason_as_sent(finish: str) -> None:
    frames = openai_frames([oa_chunk({"content": "t"}), oa_chunk({}, finish=finish)])
    with WireServer([Reply(events=frames)]) as srv:
        turn = await complete(engine(srv.url), REQ)
    assert turn.stop_reason == finish


@pytest.mark.anyio
async def test_usage_is_read_wherever_it_arrives_and_null_usage_is_ignored() -> None:
    deepseek = {"prompt_tokens": 50, "completion_tokens": 6, "prompt_cache_hit_tokens": 20}
    chunks = [
        {**oa_chunk({"content": "a"}), "usage": None},
        oa_chunk({}, finish="stop", usage=deepseek),
    ]
    with WireServer([Reply(events=openai_frames(chunks))]) as srv:
        turn = await complete(engine(srv.url), REQ)
    assert turn.usage == Usage(input_tokens=30, output_tokens=6, cache_read_tokens=20)
    with WireServer([Reply(events=text_frames("x"))]) as srv:
        turn = await complete(engine(srv.url), REQ)
    assert turn.usage == Usage(input_tokens=7, output_tokens=4, cache_read_tokens=5)


@pytest.mark.anyio
async def test_a_refusal_delta_is_not_answer_text() -> None:
    chunks = [
        oa_chunk({"role": "assistant", "content": None, "refusal": "I can't."}),
        oa_chunk({}, finish="stop"),
    ]
    with WireServer([Reply(events=openai_frames(chunks))]) as srv:
        events = await collect(engine(srv.url))
    assert not [e for e in events if isinstance(e, TextDelta)]
    done = events[-1]
    assert isinstance(done, TurnDone)
    assert done.turn.text == ""


@pytest.mark.anyio
async def test_a_tool_call_is_announced_when_its_name_arrives_and_keeps_its_first_id() -> None:
    chunks = [
        oa_chunk({"tool_calls": [{"index": 0, "id": "c1", "function": {"arguments": '{"a"'}}]}),
        oa_chunk({"tool_calls": [{"index": 0, "id": "c9", "function": {"name": "ls"}}]}),
        oa_chunk({"tool_calls": [{"index": 0, "function": {"name": "x", "arguments": ":1}"}}]}),
        oa_chunk({}, finish="tool_calls"),
    ]
    with WireServer([Reply(events=openai_frames(chunks))]) as srv:
        events = await collect(engine(srv.url))
    assert [e for e in events if isinstance(e, ToolCallStarted)] == [ToolCallStarted(0, "c1", "ls")]
    done = events[-1]
    assert isinstance(done, TurnDone)
    assert done.turn.tool_calls == (ToolCall("c1", "ls", '{"a":1}'),)


@pytest.mark.anyio
async def test_a_body_that_ends_cleanly_before_the_model_finished_is_transient() -> None:
    reply = Reply(events=text_frames("Hello world"), end_after=3)
    err = await failure(reply)
    assert err.kind is Kind.TRANSIENT
    assert "finish_reason" in str(err)


@pytest.mark.anyio
@pytest.mark.parametrize("content_type", ["text/html; charset=utf-8", "application/xhtml+xml"])
async def test_an_html_page_is_not_read_as_a_stream_and_names_the_base_url(
    content_type: str,
) -> None:
    page = "<!doctype html><html><title>Log in</title>" + "x" * 100_000 + "</html>"
    reply = Reply(raw=page, headers={"content-type": content_type})
    with WireServer([reply]) as srv, pytest.raises(EngineError) as info:
        await complete(engine(srv.url), REQ)
    text = str(info.value)
    assert info.value.kind is Kind.UNKNOWN  # not retried: the same page comes back
    assert "HTML" in text
    assert content_type.split(";")[0] in text
    assert srv.url in text
    assert "<!doctype html><html><title>Log in" in text
    assert "finish_reason" not in text
    assert len(text) < 1000


@pytest.mark.anyio
async def test_data_that_is_not_json_is_an_error_naming_the_provider() -> None:
    frames = [frame(oa_chunk({"content": "a"})), "data: {broken\n\n", "data: [DONE]\n\n"]
    err = await failure(Reply(events=frames))
    assert err.kind is Kind.INVALID_ARGS  # not retried: a server that sends this sends it again


# -- errors ------------------------------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("status", "error", "kind"),
    [
        (403, {"message": "no access", "type": "permission_error"}, Kind.PERMISSION),
        (404, {"message": "no such model", "code": "model_not_found"}, Kind.NOT_FOUND),
        (413, {"message": "too big"}, Kind.TOO_LARGE),
        # the status decides, not the body's code: a 400 stays invalid_args
        (400, {"message": "too long", "code": "context_length_exceeded"}, Kind.INVALID_ARGS),
    ],
)
async def test_statuses_decide_the_kind_and_the_message_is_the_providers(
    status: int, error: dict[str, str], kind: Kind
) -> None:
    err = await failure(Reply(status, body={"error": error}))
    assert err.kind is kind
    assert f"HTTP {status}" in str(err)
    assert error["message"] in str(err)


@pytest.mark.anyio
async def test_a_429_with_retry_after_is_rate_limited_and_left_to_the_loop() -> None:
    reply = Reply(429, body={"error": {"message": "slow down"}}, headers={"retry-after": "1"})
    err = await failure(reply)
    assert err.kind is Kind.RATE_LIMITED
    assert err.retryable


@pytest.mark.anyio
async def test_a_non_json_error_body_is_classified_by_its_status() -> None:
    err = await failure(Reply(502, raw="<html>Bad Gateway</html>"))
    assert err.kind is Kind.TRANSIENT
    assert "HTTP 502" in str(err)


@pytest.mark.anyio
async def test_the_key_is_redacted_from_an_error_inside_the_stream() -> None:
    frames = openai_frames([{"error": {"message": f"bad key {KEY}", "type": "invalid_api_key"}}])
    err = await failure(Reply(events=frames))
    assert err.kind is Kind.UNAUTHORIZED
    assert "[redacted]" in str(err)


@pytest.mark.anyio
async def test_an_error_in_the_stream_without_an_object_is_unknown() -> None:
    err = await failure(Reply(events=openai_frames([{"error": "something broke"}])))
    assert err.kind is Kind.UNKNOWN
    assert "error in stream" in str(err)
