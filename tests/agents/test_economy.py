"""The run's context economy on its own: admit (spill, offload), metering, compaction, no-spin."""

from __future__ import annotations

import base64
import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from yagent.agents import compaction
from yagent.agents.economy import ContextSettings, Economy
from yagent.kernel.context import budget, reminder
from yagent.kernel.context.offload import FileStore, Offloader
from yagent.kernel.context.spill import Spill
from yagent.llm import Message, ToolCall
from yagent.toolspec.builtin import builtin_by_name

SPECS = builtin_by_name()
IMAGE = base64.b64encode(bytes(range(256)) * 8).decode()  # 2048 bytes
URI = "data:image/png;base64," + IMAGE


class Summaries:
    def __init__(self, text: str = "the summary", fail: bool = False) -> None:
        self.text = text
        self.fail = fail
        self.calls: list[tuple[int, int]] = []

    async def summarize(self, messages: Sequence[compaction.Entry], *, max_tokens: int) -> str:
        self.calls.append((len(messages), max_tokens))
        if self.fail:
            raise RuntimeError("model down")
        return self.text


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, Mapping[str, Any]]] = []
        self.archives: list[Mapping[str, Any]] = []

    def emit(self, kind: str, payload: Mapping[str, Any]) -> None:
        self.events.append((kind, payload))

    def archive(self, payload: Mapping[str, Any]) -> str:
        self.archives.append(payload)
        return f"archive:{len(self.archives)}"

    def kinds(self, kind: str) -> list[Mapping[str, Any]]:
        return [p for k, p in self.events if k == kind]


def economy(
    tmp_path: Path,
    rec: Recorder,
    summaries: Summaries | None = None,
    *,
    archive: bool = True,
    **overrides: Any,
) -> Economy:
    options: dict[str, Any] = {
        "window": 1000,
        "max_tool_output": 2000,
        "spill": Spill(tmp_path / "spill", limit=2000, page_size=1, page_cap=1),
        "spill_session": "s1",
        "offload": Offloader(FileStore(tmp_path / "offload"), min_bytes=1024),
        "keep_recent": 2,
    }
    options.update(overrides)
    return Economy(
        ContextSettings(**options),
        emit=rec.emit,
        archive=rec.archive if archive else None,
        summarizer=summaries or Summaries(),
    )


def step(i: int, size: int = 400) -> list[Message]:
    call = ToolCall(f"c{i}", "run_bash", "{}")
    return [Message("assistant", "", (call,)), Message("tool", "x" * size, "", f"c{i}", "run_bash")]


async def request(eco: Economy, messages: list[Message], step_no: int = 1) -> list[Message]:
    return await eco.before_request(messages, step=step_no, system="sys", tools=[])


# -- admit ------------------------------------------------------------------------------------
def test_small_outputs_pass_unchanged(tmp_path: Path) -> None:
    admitted = economy(tmp_path, Recorder()).admit(SPECS["run_bash"], "small")
    assert admitted.content == "small"
    assert admitted.facts == {}


def test_big_outputs_are_spilled_with_a_fetchable_locator(tmp_path: Path) -> None:
    eco = economy(tmp_path, Recorder())
    output = json.dumps({"text": "\n".join(str(n) for n in range(3000))})
    admitted = eco.admit(SPECS["run_bash"], output)
    spilled = admitted.facts["spilled"]
    assert spilled["stored"]
    assert spilled["total_bytes"] == len(output)
    assert admitted.content.startswith(output[:2000])
    assert spilled["locator"] in admitted.content
    page = eco.settings.spill.fetch("s1", spilled["locator"], 2, 1)  # type: ignore[union-attr]
    assert page.text == output[2000:4000]


def test_the_spill_reader_is_never_cut(tmp_path: Path) -> None:
    admitted = economy(tmp_path, Recorder()).admit(SPECS["read_spill"], "y" * 5000)
    assert admitted.content == "y" * 5000


def test_without_a_spill_store_outputs_are_not_cut(tmp_path: Path) -> None:
    admitted = economy(tmp_path, Recorder(), spill=None).admit(None, "y" * 5000)
    assert admitted.content == "y" * 5000


def test_a_new_inline_image_does_not_count_against_the_output_budget(tmp_path: Path) -> None:
    eco = economy(tmp_path, Recorder(), window=100_000)
    content = json.dumps({"output": URI, "note": "n" * 100})
    assert len(content) > 2000
    assert eco.admit(SPECS["run_bash"], content).content == content, "first sighting: inline"


def test_an_inline_object_too_big_for_its_share_of_the_window_is_spilled(tmp_path: Path) -> None:
    content = json.dumps({"output": URI, "note": "n" * 100})  # ~720 tokens
    fits = economy(tmp_path, Recorder(), window=100_000)
    assert fits.admit(SPECS["run_bash"], content).content == content
    crowded = economy(tmp_path, Recorder(), window=2000)  # its share: 500 tokens
    admitted = crowded.admit(SPECS["run_bash"], content)
    assert admitted.content != content
    assert admitted.facts["spilled"]["total_bytes"] == len(content)


# -- offload, two-phase -----------------------------------------------------------------------
@pytest.mark.anyio
async def test_an_image_is_shown_once_then_replaced_and_repeats_are_replaced_at_once(
    tmp_path: Path,
) -> None:
    rec = Recorder()
    eco = economy(tmp_path, rec, window=100_000)
    messages = [Message("user", f"look at {URI}")]
    eco.start(messages)
    first = await request(eco, messages)
    assert URI in first[0].content, "the model sees it once"
    second = await request(eco, first, 2)
    assert URI not in second[0].content
    assert "[offloaded image/png, 2048 bytes, sha256:" in second[0].content
    assert rec.kinds("offload")[0]["replaced"]
    repeat = eco.admit(SPECS["run_bash"], json.dumps({"output": URI}))
    assert URI not in repeat.content
    assert repeat.facts["offloaded"]


@pytest.mark.anyio
async def test_two_copies_in_one_request_are_both_shown_before_either_is_replaced(
    tmp_path: Path,
) -> None:
    eco = economy(tmp_path, Recorder(), window=100_000)
    messages = [Message("user", URI), Message("user", URI)]
    eco.start(messages)
    first = await request(eco, messages)
    assert [URI in m.content for m in first] == [True, True]
    second = await request(eco, first, 2)
    assert [URI in m.content for m in second] == [False, False]


# -- metering ---------------------------------------------------------------------------------
@pytest.mark.anyio
async def test_every_request_is_metered_by_segment(tmp_path: Path) -> None:
    rec = Recorder()
    eco = economy(tmp_path, rec, window=100_000)
    messages = [Message("user", "t" * 40), *step(1, 80)]
    eco.start(messages)
    await eco.before_request(messages, step=1, system="s" * 400, tools=[{"name": "x"}])
    messages += step(2, 800)
    await eco.before_request(messages, step=2, system="s" * 400, tools=[{"name": "x"}])
    first, second = rec.kinds("context")
    assert first["segments"][budget.SYSTEM] == 100
    assert first["segments"][budget.TOOL_RESULTS] == 20
    assert first["segments"][budget.TOOL_DEFINITIONS] == budget.approx_tokens('[{"name": "x"}]')
    assert first["grew"] is None
    assert second["grew"] == {"segment": budget.TOOL_RESULTS, "delta": 200}
    assert second["window"] == 100_000


def test_the_reply_reserve_and_a_model_limit_shape_the_window(tmp_path: Path) -> None:
    eco = economy(tmp_path, Recorder(), window=200_000, model_limit=100_000, reserve_output=1000)
    assert eco.window.limit == 99_000
    assert eco.window.clamped


def test_compaction_ratios_are_checked(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="compact_to"):
        economy(tmp_path, Recorder(), compact_at=0.4, compact_to=0.5)


# -- compaction -------------------------------------------------------------------------------
def long_history(steps: int = 12) -> list[Message]:
    messages = [Message("user", "the task")]
    for i in range(steps):
        messages += step(i)
    return messages


@pytest.mark.anyio
async def test_compaction_archives_first_summarises_and_keeps_pinned_and_recent(
    tmp_path: Path,
) -> None:
    rec, summaries = Recorder(), Summaries()
    eco = economy(tmp_path, rec, summaries)
    messages = long_history()
    eco.start(messages)
    after = await request(eco, messages, 5)
    assert after[0] == messages[0], "the task is pinned"
    assert compaction.is_summary(after[1])
    text = reminder.unwrap(after[1].content) or ""
    assert "archive:1" in text
    assert "the summary" in text
    assert after[2:] == messages[-2:], "the recent messages stay verbatim"
    archived = rec.archives[0]["messages"]
    assert archived == [m.to_dict() for m in messages[1:-2]], "everything that left, in full"
    event = rec.kinds("compaction")[0]
    assert event["compacted"]
    assert event["archive_ref"] == "archive:1"
    assert event["step"] == 5
    assert event["archived"] == len(archived)
    assert summaries.calls
    assert summaries.calls[0][1] == 100
    assert eco.compactions == 1
    assert rec.kinds("context")[-1]["total"] < 1000 * 0.8


@pytest.mark.anyio
async def test_a_failed_summary_truncates_with_a_visible_note_and_archives_once(
    tmp_path: Path,
) -> None:
    rec = Recorder()
    summaries = Summaries(fail=True)
    eco = economy(tmp_path, rec, summaries)
    messages = long_history()
    eco.start(messages)
    after = await request(eco, messages)
    assert after[0] == messages[0], "the task is pinned"
    note = reminder.unwrap(after[1].content) or ""
    assert compaction.is_summary(after[1])
    assert "WITHOUT a summary" in note
    assert "model down" in note
    assert "archive:1" in note
    assert after[2:] == messages[-2:], "the recent messages stay verbatim"
    event = rec.kinds("compaction")[0]
    assert event["compacted"]
    assert event["truncated"]
    assert "model down" in event["error"]
    assert rec.archives[0]["messages"] == [m.to_dict() for m in messages[1:-2]]
    assert await request(eco, after, 2) == after, "under the threshold now: nothing again"
    assert len(rec.archives) == 1
    assert len(summaries.calls) == 1


@pytest.mark.anyio
async def test_a_summariser_that_always_fails_is_backed_off_and_archives_grow_linearly(
    tmp_path: Path,
) -> None:
    rec = Recorder()
    summaries = Summaries(fail=True)
    eco = economy(tmp_path, rec, summaries)
    messages: list[Message] = [Message("user", "the task")]
    eco.start(messages)
    content = 0
    for i in range(400):
        new = step(i, size=120)
        content += sum(len(json.dumps(m.to_dict())) for m in new)
        messages = await request(eco, messages + new, i + 1)
    compactions = rec.kinds("compaction")
    assert len(compactions) >= 15, "the history kept filling the window"
    assert all(c["compacted"] and c["truncated"] for c in compactions)
    # pauses of 1, 3, 7, 15 compactions: an attempt only after each has run out
    assert len(summaries.calls) <= 1 + math.log2(len(compactions) + 1)
    paused = [c for c in compactions if "paused" in c["error"]]
    assert len(paused) == len(compactions) - len(summaries.calls)
    ids = [i for a in rec.archives for i in a["ids"]]
    assert len(ids) == len(set(ids)), "every message is archived once, never again"
    archived = sum(len(json.dumps(a["messages"])) for a in rec.archives)
    # the content once, plus the earlier truncation notes leaving in turn (no re-archiving)
    assert archived <= 1.1 * content
    assert rec.kinds("context")[-1]["total"] <= 1000


@pytest.mark.anyio
async def test_without_an_archive_nothing_leaves(tmp_path: Path) -> None:
    rec = Recorder()
    eco = economy(tmp_path, rec, archive=False)
    messages = long_history()
    eco.start(messages)
    assert await request(eco, messages) == messages
    assert "no archive" in rec.kinds("compaction")[0]["error"]


@pytest.mark.anyio
async def test_when_the_fixed_part_fills_the_window_it_says_so_once(tmp_path: Path) -> None:
    rec = Recorder()
    eco = economy(tmp_path, rec)
    messages = [Message("user", "task")]
    eco.start(messages)
    for n in range(3):
        await eco.before_request(messages, step=n, system="s" * 8000, tools=[])
    skipped = rec.kinds("compaction_skipped")
    assert len(skipped) == 1
    assert skipped[0]["reason"] == "system_and_tools_fill_the_window"


@pytest.mark.anyio
async def test_nothing_removable_is_reported_once_and_reported_again_after_it_clears(
    tmp_path: Path,
) -> None:
    rec = Recorder()
    eco = economy(tmp_path, rec)
    big = [Message("user", "x" * 3200)]
    eco.start(big)
    await request(eco, big)
    await request(eco, big, 2)
    assert [s["reason"] for s in rec.kinds("compaction_skipped")] == ["nothing_to_compact"]
    small = [Message("user", "x")]
    eco.start(small)
    await request(eco, small, 3)
    await request(eco, big, 4)
    assert len(rec.kinds("compaction_skipped")) == 2


@pytest.mark.anyio
async def test_fewer_recent_messages_are_kept_only_when_all_cannot_free_enough(
    tmp_path: Path,
) -> None:
    rec = Recorder()
    eco = economy(tmp_path, rec, keep_recent=8)
    messages = [Message("user", "task")]
    for i in range(10):
        messages += step(i, 700)
    eco.start(messages)
    await request(eco, messages)
    event = rec.kinds("compaction")[0]
    assert event["compacted"]
    assert event["kept_recent"] < 8


@given(
    shape=st.lists(
        st.tuples(st.integers(0, 3), st.integers(1, 900), st.booleans()), min_size=1, max_size=30
    )
)
@settings(max_examples=60, deadline=None)
def test_compaction_never_separates_a_call_from_its_results(
    shape: list[tuple[int, int, bool]], tmp_path_factory: pytest.TempPathFactory
) -> None:
    import anyio

    messages = [Message("user", "task")]
    for i, (calls, size, text) in enumerate(shape):
        ids = [f"c{i}-{k}" for k in range(calls)]
        content = "t" * size if text or not calls else ""
        messages.append(Message("assistant", content, tuple(ToolCall(c, "x", "{}") for c in ids)))
        messages += [Message("tool", "r" * size, "", c, "x") for c in ids]
        if not calls:
            messages.append(Message("user", "u" * (size // 3)))
    rec = Recorder()
    eco = economy(tmp_path_factory.mktemp("eco"), rec)
    eco.start(messages)
    after = anyio.run(request, eco, messages)
    issued = {c.id for m in after for c in m.tool_calls}
    answered = [m.tool_call_id for m in after if m.role == "tool"]
    assert sorted(answered) == sorted(issued)
    assert after[0] == messages[0]
    kept = [m for m in after if not compaction.is_summary(m)]
    archived = [m for a in rec.archives for m in a["messages"]]
    assert len(kept) + len(archived) == len(messages), "nothing lost"
