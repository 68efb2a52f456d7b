"""The Anthropic request body: the bytes the SDK's `messages.create` sends, with each message
encoded once while the conversation grows (issue 17: a 1 000-step run must not re-encode its
history every step)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import anthropic
import httpx2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.llm.test_anthropic_engine import engine, text_events
from tests.llm.test_openai_messages import Counted
from tests.llm.wire import Reply, WireServer, anthropic_frames
from yagent.llm import Image, Message, Request, ToolCall, complete
from yagent.llm.anthropic_engine import AnthropicEngine
from yagent.llm.anthropic_messages import BodyEncoder, wire_messages
from yagent.llm.conversations import CONVERSATIONS, Conversations
from yagent.llm.history import History, Messages

TOOLS = ({"name": "think", "parameters": {"type": "object"}}, {"name": "shot"})


_SENT: list[bytes] = []


def _capture(http: httpx2.Request) -> httpx2.Response:
    _SENT.append(http.content)
    return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=b"")


_SDK = anthropic.Anthropic(
    api_key="k",
    base_url="http://x",
    max_retries=0,
    http_client=httpx2.Client(transport=httpx2.MockTransport(_capture)),
)
_PARAMS = {marked: engine("http://x", cache_conversation=marked) for marked in (True, False)}


def sent_by_sdk(request: Request, *, cache_conversation: bool) -> bytes:
    """The reference: the bytes the SDK's `messages.create` sends for the engine's `params`."""
    _SENT.clear()
    _SDK.messages.create(**_PARAMS[cache_conversation].params(request), stream=True).close()
    return _SENT[0]


def encoded(encoder: BodyEncoder, request: Request) -> bytes:
    params = _PARAMS[True].params(request)
    return encoder.encode(request, model=params["model"], max_tokens=params["max_tokens"])


def message(kind: int, n: int) -> Message:
    if kind == 0:
        return Message("user", f'ask {n} — ünïcode \u2028 "quoted"')
    if kind == 1:  # a tool call whose arguments need repair, beside a well-formed one
        calls = (ToolCall(f"c{n}", "think", '{"t": 1}'), ToolCall(f"d{n}", "shot", "{'x': [1,"))
        return Message("assistant", "calling" if n % 2 else "", calls)
    if kind == 2:
        return Message("tool", f"result {n}", tool_call_id=f"c{n}", name="think")
    if kind == 3:  # a tool result with images: image blocks inside the result
        images = (Image("image/png", "iVBOR" * (n % 3 + 1)),)
        return Message("tool", f"shot {n}", tool_call_id=f"d{n}", name="shot", images=images)
    if kind == 4:
        return Message("assistant", f"answer {n}")
    if kind == 5:
        return Message("system", f"budget: {n} steps left")
    return Message("assistant", "")  # dropped: the API refuses empty content


FIELDS: list[dict[str, Any]] = [{"model": "claude-other", "max_tokens": 77}, {"tools": TOOLS}]
OPS = st.lists(
    st.one_of(
        st.tuples(st.just("append"), st.integers(0, 6), st.integers(0, 99)),
        st.tuples(st.just("rewrite"), st.integers(0, 6), st.integers(0, 99)),
        st.tuples(st.just("system"), st.integers(0, 2), st.integers(0, 0)),
        st.tuples(st.just("other"), st.integers(0, 6), st.integers(0, 99)),  # another agent
        st.tuples(st.just("tuple"), st.integers(0, 0), st.integers(0, 0)),
        st.tuples(st.just("fields"), st.integers(0, 1), st.integers(0, 0)),
    ),
    max_size=25,
)


@settings(max_examples=150, deadline=None)
@given(OPS, st.booleans())
def test_the_body_is_the_bytes_the_sdk_sends_for_the_whole_request(
    ops: list[tuple[str, int, int]], cache_conversation: bool
) -> None:
    encoder = BodyEncoder(cache_conversation=cache_conversation)
    history, other = History([message(0, -1)]), History([message(2, -2)])
    system, fields = "sys", FIELDS[1]
    for op, kind, n in ops:
        messages: Sequence[Message] = history.view()
        if op == "append":
            history.append(message(kind, n))
            messages = history.view()
        elif op == "rewrite" and len(history) > 1:  # offload or compaction: a new store
            kept = list(history.view())
            kept[n % len(kept)] = message(kind, n + 1000)
            history.replace(kept)
            messages = history.view()
        elif op == "system":
            system = ["", "sys", "another system prompt"][kind]
        elif op == "other":
            other.append(message(kind, n))
            messages = other.view()
        elif op == "tuple":
            messages = tuple(history.view())
        elif op == "fields":
            fields = FIELDS[kind]
        request = Request(system=system, messages=messages, **fields)
        assert encoded(encoder, request) == sent_by_sdk(
            request, cache_conversation=cache_conversation
        )


def test_a_forgotten_conversation_is_encoded_whole_again() -> None:
    encoder = BodyEncoder(cache_conversation=True)
    histories = [History([message(0, n)]) for n in range(CONVERSATIONS + 1)]
    for history in histories:  # the first is forgotten when the last arrives
        encoded(encoder, Request("", history.view()))
    for history in (histories[0], histories[-1]):
        history.append(message(4, 7))
        request = Request("", history.view())
        assert encoded(encoder, request) == sent_by_sdk(request, cache_conversation=True)


def test_a_state_whose_encoding_failed_is_forgotten_not_left_half_advanced() -> None:
    history = History([Message("user", "a")])
    failing = [True]

    def add(state: list[str], new: Sequence[Message]) -> None:
        for m in new:
            state.append(m.content)
            if m.content == "boom" and failing[0]:
                failing[0] = False
                raise ValueError("not JSON")

    conversations: Conversations[list[str]] = Conversations(list)
    assert conversations.advance(history.view(), add) == ["a"]
    history.append(Message("user", "boom"))
    with pytest.raises(ValueError, match="not JSON"):
        conversations.advance(history.view(), add)
    assert conversations.advance(history.view(), add) == ["a", "boom"]  # encoded whole again


def test_nan_in_tool_arguments_is_refused_as_the_sdk_refuses_it() -> None:
    request = Request("", Messages([Message("assistant", "", (ToolCall("c", "t", "[NaN]"),))]))
    encoder = BodyEncoder(cache_conversation=True)
    assert encoder.encode(request, model="m", max_tokens=1)  # a non-object input becomes {}
    bad = Request("", Messages([Message("assistant", "", (ToolCall("c", "t", '{"x": NaN}'),))]))
    with pytest.raises(ValueError, match="JSON compliant"):
        encoder.encode(bad, model="m", max_tokens=1)
    with pytest.raises(ValueError, match="JSON compliant"):
        sent_by_sdk(bad, cache_conversation=True)


@pytest.mark.anyio
async def test_a_step_reads_its_new_messages_for_the_wire_not_the_history() -> None:
    steps = 110
    frames = anthropic_frames(text_events("ok"))
    with WireServer([Reply(events=frames, keep_alive=True)] * steps) as srv:
        eng: AnthropicEngine = engine(srv.url)
        history = History([Counted("user", "the task")])
        reads = []
        for n in range(steps):
            Counted.reads = 0
            await complete(eng, Request(system="sys", messages=history.view(), tools=TOOLS))
            reads.append(Counted.reads)
            history.append(Counted("assistant", "", (ToolCall(f"c{n}", "think", "{}"),)))
            history.append(Counted("tool", f"r{n}", tool_call_id=f"c{n}", name="think"))
    assert reads[100] == reads[10] == 2  # the step's own two messages, at step 100 as at 10
    last: Any = srv.received[-1].body
    sent = wire_messages(history.view()[:-2], cache_conversation=True)
    assert last["messages"] == json.loads(json.dumps(sent))
    assert len(last["messages"]) == 1 + 2 * (steps - 1)
    assert last["messages"][-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    assert json.dumps(last).count('"cache_control"') == 3  # tools, system, the newest block


@pytest.mark.anyio
async def test_the_engine_sends_what_messages_create_sends_headers_and_all() -> None:
    history = History([message(0, 1), message(1, 1), message(2, 1), message(3, 1)])
    request = Request("sys", history.view(), TOOLS)
    frames = anthropic_frames(text_events("ok"))
    with WireServer([Reply(events=frames)] * 2) as srv:
        client = anthropic.AsyncAnthropic(api_key="k", base_url=srv.url, max_retries=0)
        eng = AnthropicEngine("claude-test", client=client)
        await complete(eng, request)
        stream = await client.messages.create(**eng.params(request), stream=True)
        async with stream:
            async for _ in stream:
                pass
    ours, sdks = srv.received
    assert (ours.path, ours.body) == (sdks.path, sdks.body)
    assert ours.headers == sdks.headers
