"""A structured value is judged whole first: every text in it scanned in ONE pass (texts joined by a
line break, which no kind's pattern crosses and which bounds every pattern as a string's end
does), and walked field by field only when that pass finds something. The whole pass never misses
what the field-by-field walk finds (differential test below), so the shortcut cannot leak."""

from __future__ import annotations

import importlib
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from yagent.kernel.confine import pii
from yagent.kernel.confine.pii.detect import scan

pii_apply = importlib.import_module(
    "yagent.kernel.confine.pii.apply"
)  # `pii.apply` is the function

MOBILE = "13912345678"
EMAIL = "li.lei@example.com"
ID = "11010519491231002X"
CARD = "4111111111111111"

PIECES = st.sampled_from(
    [MOBILE, EMAIL, ID, CARD, "1", "1.", ".", "@", "-", " ", "+86", "x", "a.b", "９", "＠", "\n"]
)
TEXTS = st.lists(PIECES, max_size=4).map("".join)
EDGE_INTS = st.sampled_from(  # around the 10-digit limit below which an int is not scanned
    [9_999_999_999, 10**10, -9_999_999_999, -(10**10), int(MOBILE), -int(MOBILE), int(CARD)]
)
LEAVES = st.one_of(
    TEXTS, st.integers(), EDGE_INTS, st.floats(allow_nan=False), st.booleans(), st.none()
)
VALUES = st.recursive(
    LEAVES,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXTS, inner, max_size=3),
    max_leaves=8,
)


def each_leaf_found(value: Any) -> bool:
    """The reference: every text and number scanned on its own."""
    if isinstance(value, str):
        return bool(scan(value))
    if isinstance(value, bool) or value is None:
        return False
    if isinstance(value, int | float):
        return bool(scan(str(value)))
    if isinstance(value, dict):
        return any(each_leaf_found(k) or each_leaf_found(v) for k, v in value.items())
    return any(each_leaf_found(v) for v in value)


@settings(max_examples=400, deadline=None)
@given(VALUES)
def test_the_whole_pass_finds_whatever_a_field_by_field_walk_finds(value: Any) -> None:
    try:
        judged = pii.apply_value({"v": value}, pii.Surface.LOG)
    except pii.KeyCollisionError:  # only masking merges two keys: something was found
        assert each_leaf_found(value)
        return
    assert bool(judged.findings) == each_leaf_found(value)
    if not judged.findings:
        assert judged.value == {"v": value}


@pytest.mark.parametrize(
    "payload",
    [
        {"a": "order 1", "b": MOBILE},  # a text ending in a digit, then a number
        {"a": "1.", "b": MOBILE},  # a decimal point before the next text
        {"a": 1.5, "b": int(MOBILE)},
        {"a": ["x", MOBILE + "."], "b": "5"},
        {MOBILE: "key"},
        {"a": "li.lei", "b": "@example.com", "c": EMAIL},
    ],
)
def test_a_neighbouring_text_never_hides_a_finding(payload: dict[str, Any]) -> None:
    judged = pii.apply_value(payload, pii.Surface.LOG)
    assert judged.findings
    assert MOBILE not in str(judged.value)
    assert EMAIL not in str(judged.value)


def test_a_clean_payload_is_scanned_in_one_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []

    def counting(text: str, *args: Any, **kwargs: Any) -> Any:
        calls.append(text)
        return scan(text, *args, **kwargs)

    monkeypatch.setattr(pii_apply, "scan", counting)
    payload = {
        "agent": "coding",
        "step": 12,
        "segments": {"system": 1200, "tools": 3400, "history": 15},
        "text": "a reply that is long enough to be scanned for personal data",
        "ok": True,
        "fraction": 0.0123,
    }
    judged = pii.apply_value(payload, pii.Surface.LOG)
    assert judged.findings == ()
    assert judged.value is payload
    assert len(calls) == 1


class Flag(str):
    """A str subclass (as a StrEnum member is): judged by the general checks, not the fast path."""


NUMBERS = st.sampled_from([int(MOBILE), int(CARD), 7, -12, 0.5])
PLAIN = st.recursive(
    st.one_of(LEAVES, NUMBERS, TEXTS.map(Flag)),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.lists(inner, max_size=3).map(tuple)
        | st.dictionaries(TEXTS, inner, max_size=3)
        | st.dictionaries(st.integers(0, 3), inner, max_size=2)
    ),
    max_leaves=10,
)


@settings(max_examples=400, deadline=None)
@given(PLAIN)
def test_the_fast_collection_of_texts_collects_what_the_general_one_does(value: Any) -> None:
    """Plain dicts and lists are read by exact type (the path every event payload takes); the
    texts they give are those of the general checks — none missing, none added."""
    fast: list[str] = []
    general: list[str] = []
    assert pii_apply._texts(value, fast, 0) == pii_apply._texts_any(value, general, 0)
    assert sorted(fast) == sorted(general)


def test_the_depth_limit_holds_on_the_fast_path() -> None:
    value: Any = "x"
    for _ in range(pii_apply.MAX_DEPTH + 1):
        value = [value]
    with pytest.raises(pii.TooDeepError):
        pii.apply_value(value, pii.Surface.LOG)
    value = {"k": 13912345678}
    for _ in range(pii_apply.MAX_DEPTH - 1):
        value = {"k": value}
    judged = pii.apply_value(value, pii.Surface.LOG)  # the number sits at MAX_DEPTH exactly
    assert judged.findings


DIGITS_AND_SEPARATORS = st.text(alphabet="0123456789 -x.\n+", max_size=40)


@settings(max_examples=600, deadline=None)
@given(DIGITS_AND_SEPARATORS)
def test_the_numeric_run_is_searched_first_and_misses_no_numeric_hint(text: str) -> None:
    """`scan` looks for the cheap `_NUMERIC_RUN` before the exact `_NUMERIC_HINT`: every text the
    hint matches, the run matches too — so no numeric finding is skipped by the cheaper search."""
    detect = importlib.import_module("yagent.kernel.confine.pii.detect")
    if detect._NUMERIC_HINT.search(text):
        assert detect._NUMERIC_RUN.search(text)


@pytest.mark.parametrize("text", ["1 2 3 4 5 6 7 8 9 0 1", "139-1234-5678", "13912345678"])
def test_a_spaced_or_grouped_number_passes_the_numeric_run(text: str) -> None:
    detect = importlib.import_module("yagent.kernel.confine.pii.detect")
    assert detect._NUMERIC_RUN.search(text)
    assert detect._NUMERIC_HINT.search(text)
