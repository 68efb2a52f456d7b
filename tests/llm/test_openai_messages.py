"""The OpenAI request body: the bytes `json=` sends, with each message encoded once while the
conversation grows (issue 17: a 1 000-step run must not re-encode its history every step)."""

from __future__ import annotations

import json
from typing import Any, ClassVar

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.llm.test_openai_engine import engine
from tests.llm.wire import Reply, WireServer, text_frames
from yagent.llm import Image, Message, Request, ToolCall, complete
from yagent.llm.history import History
from yagent.llm.openai_messages import CONVERSATIONS, BodyEncoder, wire_messages

FIELDS: dict[str, Any] = {
    "model": "gpt-test",
    "tools": [{"type": "function", "function": {"name": "think"}}],
    "stream": True,
    "stream_options": {"include_usage": True},
}


def sent_by_httpx(request: Request, fields: dict[str, Any]) -> bytes:
    """The reference: what httpx sends for the whole body given as `json=`."""
    body = {"model": fields["model"], "messages": wire_messages(request)}
    body |= {k: v for k, v in fields.items() if k != "model"}
    return httpx.Request("POST", "http://x", json=body).content


def message(kind: int, n: int) -> Message:
    if kind == 0:
        return Message("user", f'ask {n} — ünïcode \u2028 "quoted"')
    if kind == 1:
        return Message("assistant", "", (ToolCall(f"c{n}", "think", '{"t": 1}'),))
    if kind == 2:
        return Message("tool", f"result {n}", tool_call_id=f"c{n}", name="think")
    if kind == 3:  # a tool result with images: they follow the run of tool messages
        images = (Image("image/png", "iVBOR" * (n % 3 + 1)),)
        return Message("tool", f"shot {n}", tool_call_id=f"c{n}", name="shot", images=images)
    return Message("assistant", f"answer {n}")


OPS = st.lists(
    st.one_of(
        st.tuples(st.just("append"), st.integers(0, 4), st.integers(0, 99)),
        st.tuples(st.just("rewrite"), st.integers(0, 4), st.integers(0, 99)),
        st.tuples(st.just("system"), st.integers(0, 2), st.integers(0, 0)),
        st.tuples(st.just("other"), st.integers(0, 4), st.integers(0, 99)),  # another agent
        st.tuples(st.just("tuple"), st.integers(0, 0), st.integers(0, 0)),
        st.tuples(st.just("fields"), st.integers(0, 1), st.integers(0, 0)),
    ),
    max_size=30,
)


@settings(max_examples=300, deadline=None)
@given(OPS)
def test_the_body_is_the_bytes_httpx_sends_for_the_whole_request(
    ops: list[tuple[str, int, int]],
) -> None:
    encoder = BodyEncoder()
    history, other = History([message(0, -1)]), History([message(0, -2)])
    system, fields = "sys", dict(FIELDS)
    for op, kind, n in ops:
        messages: Any = history.view()
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
            fields = dict(FIELDS) if kind else {"model": "m", "stream": True}
        request = Request(system=system, messages=messages)
        assert encoder.encode(request, fields) == sent_by_httpx(request, fields)


def test_a_forgotten_conversation_is_encoded_whole_again() -> None:
    encoder = BodyEncoder()
    histories = [History([message(0, n)]) for n in range(CONVERSATIONS + 1)]
    for history in histories:  # the first is forgotten when the last arrives
        encoder.encode(Request("", history.view()), FIELDS)
    for history in (histories[0], histories[-1]):
        history.append(message(4, 7))
        request = Request("", history.view())
        assert encoder.encode(request, FIELDS) == sent_by_httpx(request, FIELDS)


class Counted(Message):
    """A message that counts how often its content is read (by whatever encodes it)."""

    __slots__ = ()
    reads: ClassVar[int] = 0

    def __getattribute__(self, name: str) -> Any:
        if name == "content":
            Counted.reads += 1
        return super().__getattribute__(name)


@pytest.mark.anyio
async def test_a_step_reads_its_new_messages_for_the_wire_not_the_history() -> None:
    steps = 120
    with WireServer([Reply(events=text_frames("ok"), keep_alive=True)] * steps) as srv:
        eng = engine(srv.url)
        history = History([Counted("user", "the task")])
        reads = []
        for n in range(steps):
            Counted.reads = 0
            await complete(eng, Request(system="sys", messages=history.view()))
            reads.append(Counted.reads)
            history.append(Counted("assistant", "", (ToolCall(f"c{n}", "think", "{}"),)))
            history.append(Counted("tool", f"r{n}", tool_call_id=f"c{n}", name="think"))
    assert reads[100] == reads[10] == 2  # the step's own two messages, at step 100 as at 10
    last = srv.received[-1].body["messages"]
    assert len(last) == 1 + 1 + 2 * (steps - 1)
    assert last == json.loads(json.dumps(wire_messages(Request("sys", history.view()))))[:-2]
