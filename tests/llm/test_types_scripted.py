"""Provider-neutral types, the shared identity rule and the ScriptedEngine."""

from __future__ import annotations

from collections.abc import AsyncIterator

import anyio
import pytest

from yagent.kernel.judge.toolfail import Kind
from yagent.llm.identity import first_line, identify
from yagent.llm.scripted import ScriptedEngine, call, say
from yagent.llm.types import (
    AssistantTurn,
    Engine,
    EngineError,
    Message,
    Request,
    StreamEvent,
    TextDelta,
    ToolCall,
    complete,
    tool_defs_of,
)


def test_message_round_trips_through_dicts() -> None:
    message = Message("assistant", "t", (ToolCall("c", "n", "{}"),))
    assert Message.from_dict(message.to_dict()) == message
    tool = Message("tool", "r", tool_call_id="c", name="n")
    assert tool.to_dict() == {"role": "tool", "content": "r", "tool_call_id": "c", "name": "n"}
    assert Message.from_dict(tool.to_dict()) == tool
    assert Message.from_dict({"role": "user", "content": None}) == Message("user", "")


def test_tool_defs_are_sorted_by_name() -> None:
    assert [d["name"] for d in tool_defs_of([{"name": "b"}, {"name": "a"}])] == ["a", "b"]


class NoTurn:
    model = "broken"

    async def stream(self, request: Request) -> AsyncIterator[StreamEvent]:
        yield TextDelta("partial")


@pytest.mark.anyio
async def test_a_stream_without_a_turn_is_an_error() -> None:
    engine: Engine = NoTurn()
    with pytest.raises(EngineError) as info:
        await complete(engine, Request(system="", messages=()))
    assert info.value.kind is Kind.INTERNAL
    assert not info.value.retryable


def test_identity_is_recognised_from_the_first_line_only_in_sorted_order() -> None:
    markers = {"coding": "Coding agent"}
    assert (
        identify("You are the Coding agent.\nrepo", ["repo", "coding"], markers, who="w")
        == "coding"
    )
    assert identify("repo and coding", ["repo", "coding"], {}, who="w") == "coding"
    with pytest.raises(EngineError, match="w: no script for system prompt 'x'"):
        identify("x\nCoding agent", ["coding"], markers, who="w")
    assert first_line("  \n") == ""
    with pytest.raises(EngineError):
        identify("", ["coding"], {"coding": ""}, who="w")


@pytest.mark.anyio
async def test_g4_scripted_engine_dispatches_by_identity_and_reports_exhaustion() -> None:
    engine = ScriptedEngine(
        {
            "coding": [call("read", call_id="c1"), say("done")],
            "repo": [lambda r: say(str(len(r.messages)))],
        }
    )
    repo = await complete(engine, Request(system="repo", messages=(Message("user", "x"),)))
    first = await complete(engine, Request(system="coding", messages=()))
    assert repo.text == "1"
    assert first.tool_calls == (ToolCall("c1", "read", "{}"),)
    assert engine.remaining("coding") == 1
    assert (await complete(engine, Request(system="coding", messages=()))).text == "done"
    with pytest.raises(EngineError, match="exhausted"):
        await complete(engine, Request(system="coding", messages=()))
    with anyio.CancelScope() as scope:
        scope.cancel()
        await complete(engine, Request(system="repo", messages=()))
    assert scope.cancelled_caught
    assert isinstance(AssistantTurn().message(), Message)
