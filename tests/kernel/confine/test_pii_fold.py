"""pii.fold at scale: the same text and map back as folding one character at a time, across chunk
boundaries; memory a small multiple of the text (it held a Python int and a string per character:
10 MB of binary shell output, decoded with replacements, took yagent to 1.2 GB)."""

from __future__ import annotations

import os
import tracemalloc
import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from yagent.kernel.confine.pii import fold as fold_module
from yagent.kernel.confine.pii.fold import fold


def _reference(text: str) -> tuple[str, list[int]]:
    parts: list[str] = []
    origin: list[int] = []
    for index, ch in enumerate(text):
        folded = unicodedata.normalize("NFKC", ch)
        parts.append(folded)
        origin.extend([index] * len(folded))
    return "".join(parts), origin


_CHARS = st.sampled_from([*"ab1２＠．㍿½ﬁ中é\u0301\ufffd\x00 ", "\U0001d400"])


@settings(max_examples=200, deadline=None)
@given(st.lists(_CHARS, max_size=40).map("".join), st.integers(1, 7))
def test_fold_is_folding_one_character_at_a_time(text: str, chunk: int) -> None:
    old = fold_module.CHUNK
    fold_module.CHUNK = chunk  # small chunks: every boundary case in short texts
    try:
        folded = fold(text)
    finally:
        fold_module.CHUNK = old
    want, origin = _reference(text)
    assert folded.text == want
    assert [folded.at(i) for i in range(len(want))] == origin
    assert folded.at(len(want)) == len(text)


def test_fold_of_decoded_binary_holds_no_object_per_character() -> None:
    text = os.urandom(2_000_000).decode("utf-8", errors="replace")
    assert not unicodedata.is_normalized("NFKC", text)
    tracemalloc.start()
    try:
        folded = fold(text)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert folded.origin is not None
    # the folded text is at most 4 bytes a character; per-character objects cost over 50
    assert peak < 12 * len(text), peak
