"""OpenAIEngine failures against a local server: statuses, hangs, broken streams."""

from __future__ import annotations

from typing import Any

import pytest

from tests.llm.wire import Reply, WireServer, oa_chunk, openai_frames, refused_url, text_frames
from yagent.kernel.judge.toolfail import Kind
from yagent.llm.openai_engine import OpenAIEngine
from yagent.llm.types import (
    EngineError,
    Message,
    Request,
    StreamEvent,
    TextDelta,
    TurnDone,
    complete,
)

KEY = "sk-test-secret-0123456789"
REQ = Request(system="You are the coding agent.", messages=(Message("user", "hi"),))


def engine(url: str, **kw: Any) -> OpenAIEngine:
    return OpenAIEngine("gpt-test", base_url=url, api_key=KEY, **kw)


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("status", "kind"),
    [
        (429, Kind.RATE_LIMITED),
        (503, Kind.OVERLOADED),
        (529, Kind.OVERLOADED),
        (401, Kind.UNAUTHORIZED),
        (400, Kind.INVALID_ARGS),
        (500, Kind.TRANSIENT),
    ],
)
async def test_http_errors_are_classified_and_name_provider_model_and_status(
    status: int, kind: Kind
) -> None:
    body = {"error": {"message": f"boom {status} for key {KEY}", "type": "x"}}
    # A success waits behind the error: an SDK that retried by itself would reach it.
    replies = [Reply(status, body=body), Reply(events=text_frames("late"))]
    with WireServer(replies) as srv, pytest.raises(EngineError) as info:
        await complete(engine(srv.url), REQ)
    assert len(srv.received) == 1  # max_retries=0: step retries belong to the loop
    err = info.value
    assert err.kind is kind
    text = str(err)
    assert "openai-compatible" in text
    assert "'gpt-test'" in text
    assert f"HTTP {status}" in text
    assert f"boom {status}" in text
    assert KEY not in text
    assert "[redacted]" in text


@pytest.mark.anyio
async def test_a_server_that_hangs_before_answering_is_a_timeout() -> None:
    with WireServer([Reply(hang_after=0)]) as srv, pytest.raises(EngineError) as info:
        await complete(engine(srv.url, timeout=0.3), REQ)
    assert info.value.kind is Kind.TIMEOUT
    assert info.value.retryable


@pytest.mark.anyio
async def test_a_stream_that_stalls_midway_is_a_timeout() -> None:
    with WireServer([Reply(events=text_frames("Hello"), hang_after=2)]) as srv:
        seen: list[StreamEvent] = []

        async def consume() -> None:
            async for event in engine(srv.url, timeout=0.3).stream(REQ):
                seen.append(event)  # noqa: PERF401 - keep what arrived before the stall

        with pytest.raises(EngineError) as info:
            await consume()
    assert info.value.kind is Kind.TIMEOUT
    assert [e.text for e in seen if isinstance(e, TextDelta)] == ["Hel"]
    assert not any(isinstance(e, TurnDone) for e in seen)


@pytest.mark.anyio
async def test_connection_refused_is_transient() -> None:
    with pytest.raises(EngineError) as info:
        await complete(engine(refused_url()), REQ)
    assert info.value.kind is Kind.TRANSIENT
    assert "gpt-test" in str(info.value)


@pytest.mark.anyio
async def test_a_broken_stream_is_transient() -> None:
    with (
        WireServer([Reply(events=text_frames("Hello world"), drop_after=2)]) as srv,
        pytest.raises(EngineError) as info,
    ):
        await complete(engine(srv.url), REQ)
    assert info.value.kind is Kind.TRANSIENT


@pytest.mark.anyio
async def test_a_stream_that_ends_without_finish_reason_is_an_error_not_a_short_turn() -> None:
    frames = openai_frames([oa_chunk({"content": "Hel"})], done=True)
    with WireServer([Reply(events=frames)]) as srv, pytest.raises(EngineError) as info:
        await complete(engine(srv.url), REQ)
    assert info.value.kind is Kind.TRANSIENT
    assert "finish_reason" in str(info.value)


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("error", "kind"),
    [
        ({"message": "slow down", "code": 429}, Kind.RATE_LIMITED),
        ({"message": "upstream", "code": "502"}, Kind.TRANSIENT),
        ({"message": "busy", "type": "overloaded_error"}, Kind.OVERLOADED),
        ({"message": "???", "type": "mystery"}, Kind.UNKNOWN),
    ],
)
async def test_an_error_inside_the_stream_is_classified_from_its_body(
    error: dict[str, Any], kind: Kind
) -> None:
    frames = openai_frames([oa_chunk({"content": "a"}), {"error": error}])
    with WireServer([Reply(events=frames)]) as srv, pytest.raises(EngineError) as info:
        await complete(engine(srv.url), REQ)
    assert info.value.kind is kind
    assert "error in stream" in str(info.value)
    assert error["message"] in str(info.value)
