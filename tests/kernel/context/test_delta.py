"""delta: merging, throttling on a fake clock, authoritative segments, close-out order, tags."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from yagent.kernel.context.delta import DeltaError, Emit, Piece, TagSplitter, Throttle


class FakeClock:
    def __init__(self) -> None:
        self.t = 100.0

    def now(self) -> float:
        return self.t


def make(**kwargs: object) -> tuple[Throttle, FakeClock]:
    clock = FakeClock()
    opts = {"min_interval": 1.0, "max_pending": 100, "clock": clock, **kwargs}
    return Throttle(**opts), clock  # type: ignore[arg-type]


def test_first_increment_is_emitted_at_once_then_throttled() -> None:
    th, clock = make()
    assert th.push(Piece("answer", "s", "Hel")) == (Emit("answer", "s", "Hel"),)
    assert th.push(Piece("answer", "s", "lo")) == ()
    assert th.push(Piece("answer", "s", ", ")) == ()
    clock.t += 0.5
    assert th.poll() == ()
    clock.t += 0.5
    assert th.poll() == (Emit("answer", "s", "lo, "),)  # shards merged into one emit
    assert th.poll() == ()
    assert th.text("answer", "s") == "Hello, "


def test_size_triggers_an_early_flush() -> None:
    th, _ = make(max_pending=10)
    th.push(Piece("answer", "s", "a"))
    assert th.push(Piece("answer", "s", "b" * 5)) == ()
    assert th.push(Piece("answer", "s", "c" * 5)) == (Emit("answer", "s", "b" * 5 + "c" * 5),)


def test_zero_interval_emits_every_increment() -> None:
    th, _ = make(min_interval=0.0)
    assert th.push(Piece("a", "1", "x")) == (Emit("a", "1", "x"),)
    assert th.push(Piece("a", "1", "y")) == (Emit("a", "1", "y"),)


def test_authoritative_segment_wins_over_fragments() -> None:
    th, clock = make()
    th.push(Piece("answer", "s", "The answr"))
    th.push(Piece("answer", "s", " is 4"))
    full = th.push(Piece("answer", "s", "The answer is 42.", full=True))
    assert full == ()  # throttled like anything else
    assert th.push(Piece("answer", "s", " (late fragment)")) == ()
    assert th.ignored == 1
    clock.t += 1
    # the display shows "The answr"; the full text does not extend it: replace
    assert th.poll() == (Emit("answer", "s", "The answer is 42.", replace=True),)
    assert th.text("answer", "s") == "The answer is 42."


def test_authoritative_segment_extending_the_display_is_an_append() -> None:
    th, clock = make()
    th.push(Piece("answer", "s", "The answer"))
    th.push(Piece("answer", "s", "The answer is 42.", full=True))
    clock.t += 1
    assert th.poll() == (Emit("answer", "s", " is 42."),)


def test_close_flushes_in_tag_order_then_by_name_segments_in_first_seen_order() -> None:
    th, _ = make(order=("reasoning", "answer"))
    th.push(Piece("zeta", "1", "z"))  # emitted at once (first increment)
    th.push(Piece("answer", "b", "B1"))
    th.push(Piece("tools", "1", "T"))
    th.push(Piece("answer", "a", "A1"))
    th.push(Piece("reasoning", "r", "R"))
    th.push(Piece("zeta", "1", "z2"))
    assert th.close() == (
        Emit("reasoning", "r", "R", final=True),
        Emit("answer", "b", "B1", final=True),
        Emit("answer", "a", "A1", final=True),
        Emit("tools", "1", "T", final=True),
        Emit("zeta", "1", "z2", final=True),
    )
    assert th.close() == ()
    assert th.poll() == ()
    with pytest.raises(DeltaError, match="closed"):
        th.push(Piece("answer", "a", "more"))


def test_close_order_is_independent_of_arrival_order() -> None:
    pieces = [Piece("answer", "1", "a"), Piece("reasoning", "1", "r"), Piece("other", "1", "o")]
    results = set()
    for ordering in (pieces, pieces[::-1], [pieces[1], pieces[2], pieces[0]]):
        th, _ = make(order=("reasoning", "answer"), min_interval=10**9)
        th.push(Piece("warmup", "0", "w"))
        for p in ordering:
            th.push(p)
        results.add(tuple((e.channel, e.text) for e in th.close()))
    assert results == {(("reasoning", "r"), ("answer", "a"), ("other", "o"))}


def test_nameless_pieces_and_bad_settings_are_refused() -> None:
    th, _ = make()
    with pytest.raises(DeltaError):
        th.push(Piece("", "s", "x"))
    with pytest.raises(DeltaError):
        th.push(Piece("c", "", "x"))
    with pytest.raises(DeltaError):
        Throttle(min_interval=-1)
    with pytest.raises(DeltaError):
        Throttle(max_pending=0)


def test_text_of_unknown_segment_is_empty() -> None:
    th, _ = make()
    assert th.text("nope", "0") == ""


def test_default_clock_is_monotonic() -> None:
    th = Throttle(min_interval=3600)
    assert th.push(Piece("a", "1", "x")) == (Emit("a", "1", "x"),)
    assert th.push(Piece("a", "1", "y")) == ()


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["answer", "reasoning"]),
            st.sampled_from(["1", "2"]),
            st.text(max_size=8),
            st.floats(0, 2),
        ),
        max_size=30,
    )
)
def test_replaying_emits_reproduces_the_merged_text(
    steps: list[tuple[str, str, str, float]],
) -> None:
    th, clock = make(max_pending=16)
    display: dict[tuple[str, str], str] = {}
    emits: list[Emit] = []
    for channel, segment, text, dt in steps:
        clock.t += dt
        emits += th.push(Piece(channel, segment, text))
    emits += th.close()
    for e in emits:
        key = (e.channel, e.segment)
        display[key] = e.text if e.replace else display.get(key, "") + e.text
    for channel, segment, _, _ in steps:
        assert display.get((channel, segment), "") == th.text(channel, segment)


# --- tags -------------------------------------------------------------------------------------


def split(chunks: list[str], **kwargs: object) -> list[tuple[str, str, str]]:
    splitter = TagSplitter(**kwargs)  # type: ignore[arg-type]
    pieces = [p for c in chunks for p in splitter.feed(c)] + splitter.finish()
    return [(p.channel, p.segment, p.text) for p in pieces]


def test_tags_split_channels() -> None:
    assert split(["<think>plan it</think>The answer"]) == [
        ("reasoning", "1", "plan it"),
        ("answer", "2", "The answer"),
    ]


def test_tags_cut_across_increments() -> None:
    chunks = ["pre <th", "ink>deep ", "thought</th", "ink> done <", "b> and <"]
    assert split(chunks) == [
        ("answer", "0", "pre "),
        ("reasoning", "1", "deep "),
        ("reasoning", "1", "thought"),
        ("answer", "2", " done "),
        ("answer", "2", "<b> and "),
        ("answer", "2", "<"),  # held back until finish: it could have started a tag
    ]


def test_unknown_tags_and_stray_closers_are_text() -> None:
    assert split(["a <b>x</b> </think> <think>r<think>s</think>"]) == [
        ("answer", "0", "a <b>x</b> </think> "),
        ("reasoning", "1", "r<think>s"),
    ]


def test_custom_tags_and_default_channel() -> None:
    assert split(["x<tool>y</tool>z"], tags={"tool": "calls"}, default="text") == [
        ("text", "0", "x"),
        ("calls", "1", "y"),
        ("text", "2", "z"),
    ]
    with pytest.raises(DeltaError):
        TagSplitter({"": "x"})
    with pytest.raises(DeltaError):
        TagSplitter({"t": ""})
    with pytest.raises(DeltaError):
        TagSplitter(default="")


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(["<think>", "</think>", "<", "th", "ink>", "</", "a", "b c", "\n"])),
    st.data(),
)
def test_splitting_loses_nothing_whatever_the_chunking(
    tokens: list[str], data: st.DataObject
) -> None:
    text = "".join(tokens)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=6)))
    chunks = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
    whole = split([text])
    chunked = split(chunks)

    def joined(pieces: list[tuple[str, str, str]]) -> list[tuple[str, str, str]]:
        merged: dict[tuple[str, str], str] = {}
        for channel, segment, piece in pieces:
            merged[(channel, segment)] = merged.get((channel, segment), "") + piece
        return [(c, s, t) for (c, s), t in merged.items()]

    assert joined(chunked) == joined(whole)
    visible = "".join(t for _, _, t in whole)
    assert len(visible) <= len(text)
