"""History and its views: a view taken in O(1) never changes, and `extends` never lies."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from yagent.llm import Message
from yagent.llm.history import History, Messages


def msg(n: int) -> Message:
    return Message("user", f"m{n}")


OPS = st.lists(
    st.one_of(
        st.tuples(st.just("append"), st.integers(0, 99)),
        st.tuples(st.just("replace"), st.integers(0, 99)),  # rewritten: one message changed
        st.tuples(st.just("cut"), st.integers(0, 99)),  # rewritten: shorter
        st.tuples(st.just("view"), st.integers(0, 0)),
    ),
    max_size=40,
)


@settings(max_examples=300, deadline=None)
@given(OPS)
def test_a_view_reads_what_the_history_held_when_it_was_taken(ops: list[tuple[str, int]]) -> None:
    history = History([msg(-1)])
    mirror = [msg(-1)]  # what the history holds, kept the plain way
    views: list[tuple[Messages, tuple[Message, ...]]] = []
    for op, n in ops:
        if op == "append":
            history.append(msg(n))
            mirror.append(msg(n))
        elif op == "replace":
            mirror = [*mirror]
            mirror[n % len(mirror)] = msg(1000 + n)
            history.replace(mirror)
        elif op == "cut":
            mirror = mirror[: 1 + n % len(mirror)]
            history.replace(mirror)
        views.append((history.view(), tuple(mirror)))
        for view, then in views:
            assert tuple(view) == then
            assert len(view) == len(then)
            assert view == then
        for (earlier, before), (later, after) in itertools.pairwise(views):
            if later.extends(earlier):  # never claimed for what is not a prefix
                assert after[: len(before)] == before


def test_appends_keep_extending_and_a_rewrite_ends_it() -> None:
    history = History([msg(0)])
    first = history.view()
    history.append(msg(1))
    second = history.view()
    assert second.extends(first)
    assert not first.extends(second)
    assert first.extends(first)
    history.replace([msg(0), msg(9)])
    third = history.view()
    assert not third.extends(second)
    assert not third.extends(first)
    assert tuple(second) == (msg(0), msg(1)), "a rewrite does not reach a view taken before"
    assert not Messages([msg(0)]).extends(first), "equal messages, another store: not known"


def test_a_view_is_a_read_only_sequence() -> None:
    history = History(msg(n) for n in range(5))
    view = history.view()
    history.append(msg(5))
    assert [view[0], view[-1], view[-5]] == [msg(0), msg(4), msg(0)]
    assert view[1:3] == (msg(1), msg(2))
    assert view[::-2] == (msg(4), msg(2), msg(0))
    assert view[3:] == (msg(3), msg(4)), "a slice ends where the view ends, not the history"
    assert list(reversed(view)) == [msg(n) for n in range(4, -1, -1)]
    assert msg(4) in view
    assert msg(5) not in view
    for bad in (5, -6):
        with pytest.raises(IndexError, match="out of range for 5 messages"):
            view[bad]
    assert view == Messages(msg(n) for n in range(5))
    assert hash(view) == hash(tuple(view))
    assert view != [msg(n) for n in range(5)], "a list is not a view (as it is not a tuple)"
    assert (len(history), len(view)) == (6, 5)
    assert repr(view) == "Messages(5 messages)"
    assert not hasattr(view, "append")
    assert not hasattr(view, "__setitem__")
