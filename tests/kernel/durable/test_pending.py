"""pending: one canonical encoding; decoding degrades every invalid value to "no pending"."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from yagent.kernel.durable import pending
from yagent.kernel.durable.pending import Pending


class FakeClock:
    def __init__(self, now: float) -> None:
        self.value = now

    def now(self) -> float:
        return self.value


JSON_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(),
)
JSON = st.recursive(
    JSON_SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)
PAYLOADS = st.dictionaries(st.text(), JSON, max_size=5)
STATES = st.builds(
    Pending,
    kind=st.text(min_size=1),
    id=st.text(min_size=1),
    payload=PAYLOADS,
    created_at=st.floats(allow_nan=False, allow_infinity=False),
)


@settings(max_examples=300)
@given(STATES)
def test_decode_inverts_encode(state: Pending) -> None:
    text = pending.encode(state)
    assert pending.decode(text) == state
    assert pending.encode(pending.decode(text)) == text  # type: ignore[arg-type]


def test_encoding_is_canonical() -> None:
    a = Pending("approval", "call-7", {"b": [1, {"y": 2, "x": 1}], "a": "é"}, 12.5)
    b = Pending("approval", "call-7", {"a": "é", "b": [1, {"x": 1, "y": 2}]}, 12.5)
    assert a == b
    assert hash(a) == hash(b)
    assert (
        pending.encode(a)
        == pending.encode(b)
        == (
            '{"created_at":12.5,"id":"call-7","kind":"approval",'
            '"payload":{"a":"\\u00e9","b":[1,{"x":1,"y":2}]},"v":1}'
        )
    )


def test_payload_is_deeply_frozen() -> None:
    source: dict[str, Any] = {"items": [1, 2], "nested": {"k": "v"}}
    state = Pending("answer", "q1", source)
    source["items"].append(3)
    source["extra"] = True
    assert state.payload["items"] == (1, 2)
    assert "extra" not in state.payload
    with pytest.raises(TypeError):
        state.payload["nested"]["k"] = "changed"
    with pytest.raises(AttributeError):
        state.kind = "other"  # type: ignore[misc]


def test_create_stamps_the_injected_clock() -> None:
    state = pending.create("approval", "c1", {"tool": "x"}, clock=FakeClock(1000.0))
    assert state.created_at == 1000.0
    assert state.payload == {"tool": "x"}
    assert pending.create("approval", "c2").created_at > 0
    assert pending.create("approval", "c3", clock=FakeClock(5)).payload == {}


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"kind": "", "id": "x"}, "kind"),
        ({"kind": "k", "id": 3}, "id"),
        ({"kind": "k", "id": "x", "payload": [1]}, "JSON object"),
        ({"kind": "k", "id": "x", "payload": {"s": {1, 2}}}, "not a JSON value"),
        ({"kind": "k", "id": "x", "payload": {"b": b"raw"}}, "not a JSON value"),
        ({"kind": "k", "id": "x", "payload": {"n": {1: "a"}}}, "non-string key"),
        ({"kind": "k", "id": "x", "payload": {"f": math.nan}}, "finite"),
        ({"kind": "k", "id": "x", "created_at": math.inf}, "created_at"),
        ({"kind": "k", "id": "x", "created_at": True}, "created_at"),
        ({"kind": "k", "id": "x", "created_at": "now"}, "created_at"),
    ],
)
def test_impossible_states_are_refused(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(pending.PendingError, match=message):
        Pending(**kwargs)


def test_encode_refuses_other_types() -> None:
    with pytest.raises(pending.PendingError):
        pending.encode({"kind": "k"})  # type: ignore[arg-type]


VALID = json.loads(pending.encode(Pending("approval", "c1", {"a": 1}, 3.0)))


def _with(**changes: Any) -> str:
    document = {**VALID, **changes}
    return json.dumps({k: v for k, v in document.items() if v is not _DROP})


_DROP = object()


@pytest.mark.parametrize(
    "value",
    [
        None,
        "",
        " ",
        b'{"v":1}',
        bytearray(b"x"),
        42,
        3.5,
        ["list"],
        {"v": 1},
        VALID,
        "not json",
        "{",
        "[]",
        "{}",
        "null",
        '"a string"',
        _with(v=2),
        _with(v=True),
        _with(v="1"),
        _with(v=1.0),
        _with(kind=""),
        _with(kind=5),
        _with(id=None),
        _with(payload=[1]),
        _with(payload="x"),
        _with(created_at="yesterday"),
        _with(created_at=True),
        _with(created_at=None),
        _with(extra="field"),
        _with(kind=_DROP),
        _with(payload=_DROP),
        pending.encode(Pending("a", "b")).replace("0.0", "NaN"),
        pending.encode(Pending("a", "b")).replace("0.0", "Infinity"),
        pending.encode(Pending("a", "b", {"x": 1})).replace("1}", "-Infinity}"),
        pending.encode(Pending("a", "b", {"x": 1})).replace(":1}", ":" + "9" * 5000 + "}"),
        "[" * 100_000 + "]" * 100_000,
        '{"v":1,"kind":"k","id":"i","created_at":1.0,"payload":'
        + '{"a":' * 5000
        + "1"
        + "}" * 5001,
    ],
)
def test_invalid_values_decode_to_no_pending(value: object) -> None:
    assert pending.decode(value) is None


def test_an_integer_timestamp_is_tolerated() -> None:
    state = pending.decode(_with(created_at=7))
    assert state is not None
    assert state.created_at == 7.0
    assert isinstance(state.created_at, float)


ANYTHING = st.one_of(
    st.none(),
    st.text(),
    st.binary(),
    st.integers(),
    st.floats(),
    st.lists(st.integers()),
    st.dictionaries(st.text(), st.integers()),
    JSON.map(json.dumps),
    st.dictionaries(st.sampled_from([*sorted(VALID), "x"]), JSON).map(json.dumps),
)


@settings(max_examples=500)
@given(ANYTHING)
def test_decode_never_raises(value: object) -> None:
    result = pending.decode(value)
    assert result is None or isinstance(result, Pending)


@settings(max_examples=300)
@given(STATES, st.data())
def test_damaged_encodings_never_raise(state: Pending, data: st.DataObject) -> None:
    text = pending.encode(state)
    cut = data.draw(st.integers(0, len(text)))
    junk = data.draw(st.text(max_size=3))
    damaged = text[:cut] + junk + text[cut + data.draw(st.integers(0, 3)) :]
    result = pending.decode(damaged)
    assert result is None or isinstance(result, Pending)


def test_depth_limit_does_not_depend_on_the_recursion_limit() -> None:
    import sys

    deep = (
        '{"v":1,"kind":"k","id":"i","created_at":1.0,"payload":' + '{"a":' * 2000 + "1" + "}" * 2001
    )
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(100_000)
    try:
        assert pending.decode(deep) is None
    finally:
        sys.setrecursionlimit(old)
