"""`app.segments`: streamed text cut at safe points, so screening the segments one by one masks
exactly what screening the whole text would — however the provider split it into pieces — while
the stable prefix of an unfinished line is committed at once."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from yagent.app.segments import Segments
from yagent.kernel.confine import pii
from yagent.tools.outbound import policy_of

STORE = pii.PolicyStore(policy_of("mask", "mask", "mask"))
PERSONAL = [
    "13812345678",
    "138 1234 5678",
    "138-1234-5678",
    "+86 138 1234 5678",
    "(+86) 138 1234 5678",
    "0086-13812345678",
    "１３８１２３４５６７８",  # fullwidth digits fold to ASCII
    "4111 1111 1111 1111",
    "4111-1111-1111-1111",
    "4111111111111111",
    "110105 19491231 002X",
    "110105-1949-1231-002X",
    "11010519491231002X",
    "订单号11010519491231002X",
    "someone@example.com",
    "ｓｏｍｅｏｎｅ＠ｅｘａｍｐｌｅ．ｃｏｍ",
    "用户@例子.广告",
]
FILLER = ["call", "me", "at", "or", "(see)", "1", "42", "1.5", "x", "—", "：", "\u3000", "8)"]
SEPARATORS = [" ", "  ", "\t", "\n", ", ", "\u3000", ""]


def screen(text: str) -> str:
    value = pii.apply(text, pii.Surface.DISPLAY, store=STORE).value
    assert value is not None
    return value


def segments_of(pieces: list[str]) -> list[str]:
    segments = Segments()
    out = [s["text"] for p in pieces for s in segments.feed({"text": p, "channel": "answer"})]
    return out + [s["text"] for s in segments.flush("")]


@st.composite
def streams(draw: st.DrawFn) -> tuple[str, list[str]]:
    words = draw(st.lists(st.sampled_from(PERSONAL + FILLER), min_size=1, max_size=12))
    text = ""
    for word in words:
        text += word + draw(st.sampled_from(SEPARATORS))
    cuts = sorted(draw(st.sets(st.integers(1, max(1, len(text) - 1)), max_size=len(text))))
    pieces = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
    return text, [p for p in pieces if p]


@settings(max_examples=400, deadline=None)
@given(streams())
def test_segments_screened_one_by_one_mask_what_the_whole_text_masks(
    stream: tuple[str, list[str]],
) -> None:
    text, pieces = stream
    parts = segments_of(pieces)
    assert "".join(parts) == text  # nothing dropped, reordered or duplicated
    assert "".join(screen(p) for p in parts) == screen(text)


def test_the_stable_prefix_of_an_unfinished_line_is_committed() -> None:
    segments = Segments()
    shown = segments.feed({"text": "Here is the first hal", "channel": "answer"})
    assert [s["text"] for s in shown] == ["Here is the first "]  # the word being streamed waits


def test_digit_groups_that_could_still_grow_into_a_number_are_held() -> None:
    segments = Segments()
    shown = segments.feed({"text": "call 138 1234 ", "channel": "answer"})
    assert [s["text"] for s in shown] == ["call "]
    shown = segments.feed({"text": "5678 now ", "channel": "answer"})
    assert [screen(s["text"]) for s in shown] == ["[MOBILE] now "]


def test_a_pause_flushes_nothing_held() -> None:
    segments = Segments()
    assert segments.feed({"text": "mail a@b", "channel": "answer"})[0]["text"] == "mail "
    assert segments.feed({"text": "", "channel": "answer"}) == []
    assert [s["text"] for s in segments.flush("")] == ["a@b"]
