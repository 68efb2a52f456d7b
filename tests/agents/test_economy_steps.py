"""The economy's per-request work does not grow with the run: a message the offloader has
settled (nothing in it will ever be replaced) is not looked at again."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from yagent.agents import compaction
from yagent.agents.economy import ContextSettings, Economy
from yagent.kernel.context.offload import FileStore, Offloader
from yagent.llm import Message, ToolCall

URI = "data:image/png;base64," + "QUFB" * 400


class Looked(set[str]):
    """The economy's settled set, counting how often a message's id is looked up in it."""

    lookups = 0

    def __contains__(self, key: object) -> bool:
        Looked.lookups += 1
        return super().__contains__(key)


class Summaries:
    async def summarize(self, messages: Sequence[compaction.Entry], *, max_tokens: int) -> str:
        return "summary"


def _economy(tmp_path: Path, events: list[tuple[str, Mapping[str, Any]]]) -> Economy:
    settings = ContextSettings(
        window=10_000_000, offload=Offloader(FileStore(tmp_path / "offload"), min_bytes=1024)
    )
    eco = Economy(
        settings,
        emit=lambda kind, payload: events.append((kind, payload)),
        archive=None,
        summarizer=Summaries(),
    )
    eco._settled = Looked()
    return eco


def _step(i: int, content: str = "plain output") -> list[Message]:
    call = ToolCall(f"c{i}", "think", "{}")
    return [Message("assistant", "", (call,)), Message("tool", content, "", f"c{i}", "think")]


async def _lookups_of_one_request(eco: Economy, messages: list[Message], step: int) -> int:
    before = Looked.lookups
    await eco.before_request(messages, step=step, system="sys", tools=[])
    return Looked.lookups - before


@pytest.mark.anyio
async def test_a_request_looks_only_at_what_is_not_settled(tmp_path: Path) -> None:
    events: list[tuple[str, Mapping[str, Any]]] = []
    eco = _economy(tmp_path, events)
    messages = [Message("user", "task")]
    eco.start(messages)
    counts = []
    for i in range(300):
        messages += _step(i)
        counts.append(await _lookups_of_one_request(eco, messages, i + 1))
    assert counts[10] == counts[299]  # the same work at request 300 as at request 11


@pytest.mark.anyio
async def test_an_object_after_many_settled_messages_is_still_shown_once_then_replaced(
    tmp_path: Path,
) -> None:
    eco = _economy(tmp_path, [])
    messages = [Message("user", "task")]
    eco.start(messages)
    for i in range(20):
        messages += _step(i)
        messages = await eco.before_request(messages, step=i + 1, system="s", tools=[])
    messages += _step(20, f"look: {URI}")
    shown = await eco.before_request(messages, step=21, system="s", tools=[])
    assert URI in shown[-1].content
    shown += _step(21)
    later = await eco.before_request(shown, step=22, system="s", tools=[])
    assert URI not in later[-3].content
    assert "[offloaded image/png" in later[-3].content


@pytest.mark.anyio
async def test_after_a_compaction_new_objects_are_still_offloaded(tmp_path: Path) -> None:
    events: list[tuple[str, Mapping[str, Any]]] = []
    settings = ContextSettings(
        window=4000,
        keep_recent=2,
        offload=Offloader(FileStore(tmp_path / "offload"), min_bytes=1024),
    )
    eco = Economy(
        settings,
        emit=lambda kind, payload: events.append((kind, payload)),
        archive=lambda payload: "archive:1",
        summarizer=Summaries(),
    )
    messages = [Message("user", "task")]
    eco.start(messages)
    step = 0
    while not any(kind == "compaction" for kind, _ in events):
        step += 1
        messages += _step(step, "x" * 2000)
        messages = await eco.before_request(messages, step=step, system="s", tools=[])
    messages += _step(step + 1, f"look: {URI}")
    shown = await eco.before_request(messages, step=step + 1, system="s", tools=[])
    assert URI in shown[-1].content
    shown += _step(step + 2)
    later = await eco.before_request(shown, step=step + 2, system="s", tools=[])
    assert URI not in later[-3].content
    assert "[offloaded image/png" in later[-3].content


class Scans(Offloader):
    """The real offloader, counting the texts it is asked to process."""

    processed = 0

    def process(self, value: Any, *, seen: frozenset[str] = frozenset()) -> Any:
        Scans.processed += 1
        return super().process(value, seen=seen)


@pytest.mark.anyio
async def test_a_step_of_short_messages_asks_the_offloader_nothing(tmp_path: Path) -> None:
    events: list[tuple[str, Mapping[str, Any]]] = []
    offloader = Scans(FileStore(tmp_path / "offload"), min_bytes=1024)
    eco = Economy(
        ContextSettings(window=10_000_000, offload=offloader),
        emit=lambda kind, payload: events.append((kind, payload)),
        archive=None,
        summarizer=Summaries(),
    )
    messages = [Message("user", "task")]
    eco.start(messages)
    for i in range(5):
        messages += _step(i)
        before = Scans.processed
        messages = await eco.before_request(messages, step=i + 1, system="sys", tools=[])
        assert Scans.processed == before, "a message too short to hold an object was scanned"
    messages += _step(5, URI)  # long enough to hold one: scanned, shown once, then replaced
    messages = await eco.before_request(messages, step=6, system="sys", tools=[])
    assert URI in messages[-1].content
    messages += _step(6)
    messages = await eco.before_request(messages, step=7, system="sys", tools=[])
    assert URI not in messages[-3].content
    assert "[offloaded image/png" in messages[-3].content
    assert [kind for kind, _ in events].count("offload") == 1
