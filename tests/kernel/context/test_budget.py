"""budget: the clamped window, segment metering, the pure plan and its three guards, apply."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from yagent.kernel.context import budget
from yagent.kernel.context.budget import (
    BudgetError,
    Item,
    Meter,
    NoPlan,
    Plan,
    Reason,
    StalePlanError,
    apply_plan,
    approx_tokens,
    clamp_window,
    plan_compaction,
)

# --- window -----------------------------------------------------------------------------------


def test_configured_window_above_model_limit_is_clamped_and_says_so() -> None:
    w = clamp_window(128_000, 200_000)
    assert w.limit == 128_000
    assert w.clamped
    assert "200000" in w.note
    assert "128000" in w.note


def test_configured_window_below_limit_is_used_as_is() -> None:
    w = clamp_window(128_000, 32_000)
    assert (w.limit, w.clamped, w.note) == (32_000, False, "")
    assert clamp_window(8_000).limit == 8_000


def test_output_reserve_comes_off_the_input_side_and_is_reported() -> None:
    w = clamp_window(10_000, 50_000, reserve_output=2_000)
    assert w.limit == 8_000
    assert w.clamped
    assert "2000 tokens reserved" in w.note


@pytest.mark.parametrize(
    ("limit", "configured", "reserve"),
    [(0, None, 0), (-5, None, 0), (100, 0, 0), (100, -1, 0), (100, None, -1), (100, 50, 50)],
)
def test_unusable_windows_are_refused(limit: int, configured: int | None, reserve: int) -> None:
    with pytest.raises(BudgetError):
        clamp_window(limit, configured, reserve_output=reserve)


# --- metering ---------------------------------------------------------------------------------


def test_default_counter_is_four_chars_per_token_rounded_up() -> None:
    assert budget.CHARS_PER_TOKEN == 4
    assert [
        approx_tokens(""),
        approx_tokens("a"),
        approx_tokens("abcd"),
        approx_tokens("abcde"),
    ] == [
        0,
        1,
        1,
        2,
    ]


def test_counter_seam_is_a_module_value(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("yagent.kernel.context.budget.meter.CHARS_PER_TOKEN", 2)
    assert approx_tokens("abcd") == 2


def test_segments_are_counted_separately() -> None:
    meter = Meter()
    usage = meter.measure(
        {budget.SYSTEM: "x" * 40, budget.TOOL_DEFINITIONS: ["y" * 8, "z" * 8], budget.HISTORY: []},
        clamp_window(100),
    )
    assert usage.segments == (("system", 10), ("tool_definitions", 4), ("history", 0))
    assert usage.total == 14
    assert usage.remaining == 86
    assert not usage.over
    assert usage.fraction == pytest.approx(0.14)
    assert usage.tokens("attachments") == 0


def test_growth_tells_tool_surface_from_history() -> None:
    meter, window = Meter(), clamp_window(10_000)
    before = meter.measure(
        {"system": "s" * 40, "tool_definitions": "t" * 400, "history": "h"}, window
    )
    tools_grew = meter.measure(
        {"system": "s" * 40, "tool_definitions": "t" * 4000, "history": "h" * 40}, window
    )
    history_grew = meter.measure(
        {"system": "s" * 40, "tool_definitions": "t" * 400, "history": "h" * 4000}, window
    )
    top = tools_grew.largest_growth(before)
    assert top is not None
    assert (top.segment, top.delta) == ("tool_definitions", 900)
    top = history_grew.largest_growth(before)
    assert top is not None
    assert top.segment == "history"
    assert before.largest_growth(before) is None
    # a segment that appears or disappears is a change too
    later = meter.measure({"attachments": "a" * 8}, window)
    names = [g.segment for g in later.growth(before)]
    assert names[0] == "attachments"
    assert set(names) == {"attachments", "system", "tool_definitions", "history"}


def test_due_and_over() -> None:
    usage = Meter().measure({"history": "x" * 600}, clamp_window(120))
    assert usage.over
    assert usage.remaining == -30
    assert usage.due(0.8)
    assert not Meter().measure({"history": "x" * 300}, clamp_window(120)).due(0.8)
    for bad in (0.0, 1.5, -1.0):
        with pytest.raises(BudgetError):
            usage.due(bad)


@pytest.mark.parametrize("result", [-1, 1.5, "3", None, True])
def test_a_counter_that_does_not_count_is_refused(result: object) -> None:
    meter = Meter(lambda _text: result)  # type: ignore[arg-type,return-value]
    with pytest.raises(BudgetError):
        meter.measure({"history": "x"}, clamp_window(10))


def test_empty_segment_name_is_refused() -> None:
    with pytest.raises(BudgetError):
        Meter().measure({"": "x"}, clamp_window(10))


# --- plan -------------------------------------------------------------------------------------


def convo(n: int, tokens: int = 100) -> list[Item]:
    return [Item("sys", "system", 50)] + [
        Item(f"m{i}", "user" if i % 2 == 0 else "assistant", tokens) for i in range(n)
    ]


def test_plan_keeps_system_and_recent_and_archives_the_rest() -> None:
    items = convo(10)
    plan = plan_compaction(items, window=2000, target=700, keep_recent=3, summary_tokens=100)
    assert isinstance(plan, Plan)
    assert plan.keep == (0, 8, 9, 10)
    assert plan.archive == tuple(range(1, 8))
    assert plan.summarize == plan.archive
    assert plan.tokens_before == 1050
    assert plan.tokens_after == 50 + 300 + 100
    assert plan.freed == 600
    assert plan.ids == tuple(i.id for i in items)


def test_pinned_messages_stay_verbatim() -> None:
    items = convo(10)
    items[2] = Item("m1", "assistant", 100, pinned=True)
    plan = plan_compaction(items, window=2000, target=700, keep_recent=3, summary_tokens=100)
    assert isinstance(plan, Plan)
    assert 2 in plan.keep
    assert 2 not in plan.archive


def test_keep_roles_are_host_data() -> None:
    items = [*convo(6), Item("note", "developer", 10)]
    plan = plan_compaction(
        items,
        window=2000,
        target=300,
        keep_recent=1,
        summary_tokens=50,
        keep_roles={"system", "developer"},
    )
    assert isinstance(plan, Plan)
    assert 7 in plan.keep


def test_recent_boundary_never_splits_a_group() -> None:
    items = [
        Item("sys", "system", 10),
        Item("a", "user", 300),
        Item("call", "assistant", 100, group="g1"),
        Item("r1", "tool", 100, group="g1"),
        Item("r2", "tool", 100, group="g1"),
        Item("end", "assistant", 100),
    ]
    # the last 2 would be r2 and end: the boundary moves back to the start of g1
    plan = plan_compaction(items, window=2000, target=500, keep_recent=2, summary_tokens=50)
    assert isinstance(plan, Plan)
    assert plan.archive == (1,)
    assert plan.keep == (0, 2, 3, 4, 5)


def test_pinning_one_member_keeps_its_whole_group() -> None:
    items = [
        Item("sys", "system", 10),
        Item("call", "assistant", 300, group="g1"),
        Item("r1", "tool", 300, group="g1", pinned=True),
        Item("old", "user", 500),
        Item("end", "assistant", 10),
    ]
    plan = plan_compaction(items, window=2000, target=700, keep_recent=1, summary_tokens=50)
    assert isinstance(plan, Plan)
    assert plan.archive == (3,)


def test_guard_under_target() -> None:
    out = plan_compaction(convo(3), window=2000, target=1000, keep_recent=1)
    assert isinstance(out, NoPlan)
    assert out.reason is Reason.UNDER_TARGET


def test_guard_nothing_to_compact() -> None:
    items = [Item("sys", "system", 900), Item("p", "user", 500, pinned=True), Item("r", "user", 9)]
    out = plan_compaction(items, window=2000, target=100, keep_recent=1)
    assert isinstance(out, NoPlan)
    assert out.reason is Reason.NOTHING_TO_COMPACT
    out = plan_compaction(convo(4), window=2000, target=100, keep_recent=10)
    assert isinstance(out, NoPlan)
    assert out.reason is Reason.NOTHING_TO_COMPACT


def test_guard_would_not_free_enough() -> None:
    # removing the old messages still leaves the pinned bulk above the target
    items = [Item("sys", "system", 10), Item("old", "user", 200), Item("big", "user", 900, True)]
    out = plan_compaction(items, window=2000, target=500, keep_recent=0, summary_tokens=50)
    assert isinstance(out, NoPlan)
    assert out.reason is Reason.INSUFFICIENT_GAIN
    assert "960" in out.detail
    # a summary that costs what it frees is no gain either
    items = [Item("a", "user", 100), Item("b", "user", 100)]
    out = plan_compaction(items, window=2000, target=150, keep_recent=1, summary_tokens=100)
    assert isinstance(out, NoPlan)
    assert out.reason is Reason.INSUFFICIENT_GAIN


def test_guard_same_plan_twice_is_refused() -> None:
    items = convo(10)
    first = plan_compaction(items, window=2000, target=700, keep_recent=3, summary_tokens=100)
    assert isinstance(first, Plan)
    again = plan_compaction(
        items,
        window=2000,
        target=700,
        keep_recent=3,
        summary_tokens=100,
        previous=first.fingerprint,
    )
    assert isinstance(again, NoPlan)
    assert again.reason is Reason.REPEATED
    # a different plan (the conversation moved on) is allowed
    moved = plan_compaction(
        convo(12),
        window=2000,
        target=700,
        keep_recent=3,
        summary_tokens=100,
        previous=first.fingerprint,
    )
    assert isinstance(moved, Plan)
    assert moved.fingerprint != first.fingerprint


def test_fingerprint_is_deterministic_and_order_sensitive() -> None:
    assert budget.fingerprint(["a", "b"]) == budget.fingerprint(["a", "b"])
    assert budget.fingerprint(["a", "b"]) != budget.fingerprint(["b", "a"])
    assert budget.fingerprint(["ab"]) != budget.fingerprint(["a", "b"])


def test_summary_input_limit_shows_the_newest_and_archives_all() -> None:
    plan = plan_compaction(
        convo(10),
        window=2000,
        target=700,
        keep_recent=3,
        summary_tokens=100,
        summary_input_limit=250,
    )
    assert isinstance(plan, Plan)
    assert plan.summarize == (6, 7)
    assert plan.archive == tuple(range(1, 8))
    assert plan.archive_only == (1, 2, 3, 4, 5)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"window": 0, "target": 1, "keep_recent": 1},
        {"window": 100, "target": 0, "keep_recent": 1},
        {"window": 100, "target": 101, "keep_recent": 1},
        {"window": 100, "target": 50, "keep_recent": -1},
        {"window": 100, "target": 50, "keep_recent": 1, "summary_tokens": -1},
        {"window": 100, "target": 50, "keep_recent": 1, "summary_input_limit": 0},
    ],
)
def test_bad_settings_are_refused(kwargs: dict[str, int]) -> None:
    with pytest.raises(BudgetError):
        plan_compaction(convo(3), **kwargs)  # type: ignore[arg-type]


def test_bad_items_are_refused() -> None:
    with pytest.raises(BudgetError, match="twice"):
        plan_compaction([Item("a", "u", 1), Item("a", "u", 1)], window=10, target=5, keep_recent=0)
    with pytest.raises(BudgetError, match="negative"):
        plan_compaction([Item("a", "u", -1)], window=10, target=5, keep_recent=0)


items_strategy = st.lists(
    st.builds(
        Item,
        id=st.just(""),
        role=st.sampled_from(["system", "user", "assistant", "tool"]),
        tokens=st.integers(0, 500),
        pinned=st.booleans(),
        group=st.one_of(st.none(), st.sampled_from(["g1", "g2", "g3"])),
    ),
    max_size=25,
)


@settings(max_examples=300, deadline=None)
@given(items_strategy, st.integers(1, 5000), st.integers(0, 8), st.integers(0, 300))
def test_plan_properties(raw: list[Item], target: int, keep_recent: int, summary: int) -> None:
    items = [Item(f"i{n}", it.role, it.tokens, it.pinned, it.group) for n, it in enumerate(raw)]
    out = plan_compaction(
        items, window=5000, target=target, keep_recent=keep_recent, summary_tokens=summary
    )
    if isinstance(out, NoPlan):
        return
    assert sorted(out.keep + out.archive) == list(range(len(items)))
    assert out.tokens_after <= target
    assert out.freed > 0
    movable = [i for i, it in enumerate(items) if it.role != "system"]
    recent = set(movable[-keep_recent:]) if keep_recent else set()
    for i in out.archive:
        assert items[i].role != "system"
        assert not items[i].pinned
        assert i not in recent
    for group in {"g1", "g2", "g3"}:
        fates = {i in out.archive for i, it in enumerate(items) if it.group == group}
        assert len(fates) <= 1, f"group {group} split"


# --- apply ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Msg:
    id: str
    text: str


class Recorder:
    def __init__(self, *, fail_archive: bool = False, fail_summary: bool = False) -> None:
        self.calls: list[str] = []
        self.archived: list[Msg] = []
        self.fail_archive = fail_archive
        self.fail_summary = fail_summary
        self.summary = "the gist"

    async def archive(self, messages: Sequence[Msg]) -> str:
        self.calls.append("archive")
        if self.fail_archive:
            raise OSError("disk full")
        self.archived.extend(messages)
        return "arch-1"

    async def summarize(self, messages: Sequence[Msg], *, max_tokens: int) -> str:
        self.calls.append(f"summarize:{len(messages)}:{max_tokens}")
        if self.fail_summary:
            raise RuntimeError("model down")
        return self.summary


def msgs(n: int) -> list[Msg]:
    return [Msg("sys", "system")] + [Msg(f"m{i}", f"text {i}") for i in range(n)]


def summary_msg(text: str, ref: str) -> Msg:
    return Msg("summary", f"{text} [{ref}]")


def make_plan(**kwargs: int) -> Plan:
    plan = plan_compaction(
        convo(10), window=2000, target=700, keep_recent=3, summary_tokens=100, **kwargs
    )
    assert isinstance(plan, Plan)
    return plan


async def run(
    plan: Plan, rec: Recorder, messages: list[Msg], **kwargs: object
) -> budget.Applied[Msg]:
    return await apply_plan(
        plan,
        messages,
        summarizer=rec,
        archiver=rec,
        make_summary=summary_msg,
        id_of=lambda m: m.id,
        **kwargs,  # type: ignore[arg-type]
    )


@pytest.mark.anyio
async def test_apply_archives_first_then_summarises_and_rebuilds() -> None:
    rec, messages = Recorder(), msgs(10)
    out = await run(make_plan(), rec, messages)
    assert rec.calls == ["archive", "summarize:7:100"]
    assert out.compacted
    assert out.error is None
    assert rec.archived == messages[1:8]
    assert out.archived == tuple(messages[1:8])
    assert [m.id for m in out.messages] == ["sys", "summary", "m7", "m8", "m9"]
    assert out.messages[1].text == "the gist [arch-1]"
    assert (out.archive_ref, out.summary) == ("arch-1", "the gist")


@pytest.mark.anyio
async def test_apply_refuses_a_stale_plan() -> None:
    messages = msgs(10)
    messages.append(Msg("m10", "new"))
    with pytest.raises(StalePlanError):
        await run(make_plan(), Recorder(), messages)
    messages = msgs(10)
    messages[3], messages[4] = messages[4], messages[3]
    with pytest.raises(StalePlanError):
        await run(make_plan(), Recorder(), messages)


@pytest.mark.anyio
async def test_archive_failure_keeps_everything_and_says_so() -> None:
    rec, messages = Recorder(fail_archive=True), msgs(10)
    out = await run(make_plan(), rec, messages)
    assert not out.compacted
    assert out.messages == tuple(messages)
    assert out.archived == ()
    assert out.error is not None
    assert "archiving failed" in out.error
    assert rec.calls == ["archive"]


@pytest.mark.anyio
async def test_archiver_without_reference_is_a_failure() -> None:
    class NoRef(Recorder):
        async def archive(self, messages: Sequence[Msg]) -> str:
            return ""

    out = await run(make_plan(), NoRef(), msgs(10))
    assert not out.compacted
    assert out.error is not None
    assert "no reference" in out.error


@pytest.mark.anyio
async def test_summariser_failure_keeps_original_and_says_so() -> None:
    rec, messages = Recorder(fail_summary=True), msgs(10)
    out = await run(make_plan(), rec, messages)
    assert not out.compacted
    assert out.messages == tuple(messages)
    assert out.error is not None
    assert "summariser failed" in out.error
    assert out.archive_ref == "arch-1"
    assert out.archived == tuple(messages[1:8])


@pytest.mark.anyio
@pytest.mark.parametrize("summary", ["", "   \n"])
async def test_empty_summary_keeps_original(summary: str) -> None:
    rec, messages = Recorder(), msgs(10)
    rec.summary = summary
    out = await run(make_plan(), rec, messages)
    assert not out.compacted
    assert out.messages == tuple(messages)
    assert out.error is not None
    assert "nothing" in out.error


@pytest.mark.anyio
async def test_archive_only_messages_are_named_in_the_summary() -> None:
    rec = Recorder()
    out = await run(make_plan(summary_input_limit=250), rec, msgs(10))
    assert rec.calls == ["archive", "summarize:2:100"]
    assert out.summary is not None
    assert out.summary.startswith(
        "the gist\n\n[5 earlier messages are only in the archive (arch-1)"
    )
    assert len(out.archived) == 7


@pytest.mark.anyio
async def test_nothing_fits_the_summariser_input_still_compacts_with_a_note() -> None:
    rec = Recorder()
    out = await run(make_plan(summary_input_limit=50), rec, msgs(10))
    assert rec.calls == ["archive"]
    assert out.compacted
    assert out.summary == "[7 earlier messages are only in the archive (arch-1): not summarised]"


@pytest.mark.anyio
async def test_summary_overrun_is_reported() -> None:
    rec = Recorder()
    rec.summary = "w" * 800
    out = await run(make_plan(), rec, msgs(10), counter=approx_tokens)
    assert out.compacted
    assert out.summary_overrun == 100
    rec.summary = "short"
    out = await run(make_plan(), rec, msgs(10), counter=approx_tokens)
    assert out.summary_overrun == 0


@pytest.mark.anyio
async def test_summary_lands_where_the_first_archived_message_was() -> None:
    items = [Item("sys", "system", 10), Item("pin", "user", 10, pinned=True)] + [
        Item(f"m{i}", "user", 100) for i in range(6)
    ]
    plan = plan_compaction(items, window=2000, target=400, keep_recent=2, summary_tokens=50)
    assert isinstance(plan, Plan)
    messages = [Msg(it.id, it.id) for it in items]
    out = await run(plan, Recorder(), messages)
    assert [m.id for m in out.messages] == ["sys", "pin", "summary", "m4", "m5"]


@pytest.mark.anyio
async def test_cancellation_is_not_swallowed() -> None:
    class Slow(Recorder):
        async def summarize(self, messages: Sequence[Msg], *, max_tokens: int) -> str:
            await anyio.sleep_forever()
            return ""  # pragma: no cover

    with anyio.move_on_after(0.01) as scope:
        await run(make_plan(), Slow(), msgs(10))
    assert scope.cancelled_caught


_SEGMENTS = st.lists(
    st.tuples(st.sampled_from(["system", "tools", "history", "results", "x"]), st.integers(0, 50)),
    max_size=6,
)


@settings(max_examples=300, deadline=None)
@given(before=_SEGMENTS, after=_SEGMENTS)
def test_the_largest_growth_is_the_first_of_every_growth(
    before: list[tuple[str, int]], after: list[tuple[str, int]]
) -> None:
    window = clamp_window(10_000)
    earlier, later = budget.Usage(tuple(before), window), budget.Usage(tuple(after), window)
    ranked = later.growth(earlier)
    want = ranked[0] if ranked and ranked[0].delta > 0 else None
    assert later.largest_growth(earlier) == want
