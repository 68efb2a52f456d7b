"""codec: the plain-object fast path copies exactly what the path-naming walk copies, and
refuses exactly what it refuses, with the same words."""

from __future__ import annotations

import enum
import json
import math
from collections import OrderedDict
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from yagent.memory import codec


class Level(enum.IntEnum):
    LOW = 1


class Tag(str):
    pass


_leaves = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()  # NaN and infinities included: both ways must refuse them alike
    | st.text(max_size=8)
    | st.sampled_from([Level.LOW, Tag("t"), b"raw", frozenset({1}), {1, 2}])
)
_keys = st.text(max_size=4) | st.integers(0, 3) | st.sampled_from([Tag("k"), None])
_values = st.recursive(
    _leaves,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.lists(inner, max_size=4).map(tuple)
        | st.dictionaries(_keys, inner, max_size=4)
        | st.dictionaries(st.text(max_size=4), inner, max_size=4).map(OrderedDict)
    ),
    max_leaves=12,
)


def _outcome(fn: Any, value: Any) -> tuple[str, Any]:
    try:
        return "ok", fn(value)
    except TypeError as exc:
        return "refused", str(exc)


def _same(a: Any, b: Any) -> bool:
    """Equal, with NaN equal to itself and types compared too (1 is not True here)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


@settings(deadline=None, max_examples=300)
@given(st.dictionaries(_keys, _values, max_size=5))
def test_the_fast_path_copies_and_refuses_as_the_walk_does(value: dict[Any, Any]) -> None:
    fast = _outcome(lambda v: codec.normalise_object(v, "payload"), value)
    walk = _outcome(lambda v: codec._normal(v, "payload"), value)
    assert fast[0] == walk[0]
    assert _same(fast[1], walk[1]) if fast[0] == "ok" else fast[1] == walk[1]


@settings(deadline=None, max_examples=300)
@given(st.dictionaries(_keys, _values, max_size=5))
def test_encoding_without_a_copy_writes_and_refuses_as_the_copy_does(value: dict[Any, Any]) -> None:
    direct = _outcome(lambda v: codec.encode_object(v, "payload"), value)
    copied = _outcome(lambda v: codec.dumps(codec.normalise_object(v, "payload")), value)
    assert direct == copied


def test_encoding_a_circular_object_is_refused_by_name() -> None:
    value: dict[str, Any] = {"a": []}
    value["a"].append(value)
    with pytest.raises(TypeError, match="payload is circular"):
        codec.encode_object(value, "payload")


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ({"a": [1, {"b": math.nan}]}, "payload['a'][1]['b'] is nan"),
        ({"a": {1: "x"}}, "payload['a'] has a non-string key 1"),
        ({"a": ({"b": {2}},)}, "payload['a'][0]['b'] is a set"),
    ],
)
def test_a_refusal_names_the_path_to_the_value(value: dict[str, Any], words: str) -> None:
    with pytest.raises(TypeError) as caught:
        codec.normalise_object(value, "payload")
    assert str(caught.value).startswith(words)


def test_the_copy_is_a_new_object_all_the_way_down() -> None:
    inner = {"b": [1, 2]}
    value = {"a": inner, "t": (1, "x")}
    copy = codec.normalise_object(value, "payload")
    assert copy == {"a": {"b": [1, 2]}, "t": [1, "x"]}
    assert copy is not value
    assert copy["a"] is not inner
    assert copy["a"]["b"] is not inner["b"]


@settings(deadline=None, max_examples=200)
@given(st.dictionaries(st.text(max_size=4), _values, max_size=5))
def test_dumps_writes_what_json_dumps_with_the_same_options_writes(value: dict[str, Any]) -> None:
    """The encoders are built once; what they write is `json.dumps`' text, word for word —
    readable, or escaped when a lone surrogate would not survive UTF-8."""

    try:
        plain = codec.normalise_object(value, "v")
    except TypeError:
        return
    readable = json.dumps(plain, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    escaped = json.dumps(plain, ensure_ascii=True, separators=(",", ":"), allow_nan=False)
    assert codec.dumps(plain) == (readable if codec._utf8_clean(readable) else escaped)


def test_dumps_escapes_a_lone_surrogate_and_keeps_other_text_readable() -> None:
    assert codec.dumps({"a": "é\ud800"}) == '{"a":"\\u00e9\\ud800"}'
    assert codec.dumps({"a": "é"}) == '{"a":"é"}'
