"""A request metered by segment counts each text once per run, and says what a full count says."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from yagent.agents.economy import ContextSettings, Economy
from yagent.agents.requestmeter import RequestMeter
from yagent.kernel.context import budget
from yagent.llm import Message, ToolCall

from .test_economy import Recorder, Summaries

WINDOW = budget.clamp_window(100_000, 100_000)
TOOLS = ({"name": "think", "parameters": {"type": "object"}},)


def full_count(system: str, tools: Any, messages: list[Message]) -> budget.Usage:
    """The reference: every text counted, as the economy did before (`budget.Meter`)."""
    history: list[str] = []
    results: list[str] = []
    for m in messages:
        if m.role == "tool":
            results.append(m.content)
        else:
            history.append(m.content)
            history.extend(c.name + c.arguments for c in m.tool_calls)
    segments = {
        budget.SYSTEM: system,
        budget.TOOL_DEFINITIONS: json.dumps(list(tools), sort_keys=True),
        budget.HISTORY: history,
        budget.TOOL_RESULTS: results,
    }
    return budget.Meter().measure(segments, WINDOW)


def turn(i: int, size: int = 10) -> list[Message]:
    call = ToolCall(f"c{i}", "think", '{"thought": "' + "t" * i + '"}')
    return [
        Message("assistant", "a" * i, (call,)),
        Message("tool", "r" * size, "", f"c{i}", "think"),
    ]


OPS = st.lists(
    st.one_of(
        st.tuples(st.just("append"), st.integers(0, 50)),
        st.tuples(st.just("replace"), st.integers(0, 50)),
        st.tuples(st.just("cut"), st.integers(0, 50)),
        st.tuples(st.just("system"), st.integers(0, 50)),
    ),
    max_size=12,
)


@settings(max_examples=200, deadline=None)
@given(OPS)
def test_every_request_measures_what_a_full_count_measures(ops: list[tuple[str, int]]) -> None:
    meter = RequestMeter(budget.Meter(), WINDOW)
    messages: list[Message] = [Message("user", "the task")]
    system = "sys"
    for op, n in ops:
        if op == "append":
            messages = [*messages, *turn(n)]
        elif op == "replace" and messages:  # offload or compaction rewrote one in place
            i = n % len(messages)
            messages = [*messages[:i], Message("assistant", "summary " * n), *messages[i + 1 :]]
        elif op == "cut":
            messages = messages[: n % (len(messages) + 1)]
        elif op == "system":
            system = "sys" * n
        assert meter.measure(system, TOOLS, messages) == full_count(system, TOOLS, messages)


@pytest.mark.anyio
async def test_a_step_counts_its_new_messages_not_the_history(tmp_path: Path) -> None:
    counted: list[str] = []

    def counter(text: str) -> int:
        counted.append(text)
        return budget.approx_tokens(text)

    eco = Economy(
        ContextSettings(window=100_000, counter=counter),
        emit=Recorder().emit,
        archive=None,
        summarizer=Summaries(),
    )
    tools: list[Mapping[str, Any]] = list(TOOLS)
    messages: list[Message] = [Message("user", "go")]
    for i in range(30):
        messages = [*messages, *turn(i)]
        counted.clear()
        messages = await eco.before_request(messages, step=i, system="sys", tools=tools)
        texts = len(counted)
    # the last request: its assistant message (content, one call) and its tool result
    assert texts == 3
    assert eco._last == full_count("sys", tools, messages)  # what the `context` event reports
