"""Bindings: identifiers, collisions refused at assembly, object and positional forms."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from yagent.kernel.judge import toolfail
from yagent.kernel.judge.tooldisclose import (
    CallFormError,
    IdentCollisionError,
    Param,
    ToolEntry,
    args_from_positional,
)
from yagent.kernel.ptc.bindings import OBJECT, POSITIONAL, Bindings, UnknownBindingError
from yagent.kernel.ptc.errors import AssemblyError, BindingCollisionError

from .conftest import ENTRIES, FETCH


def test_identifiers_are_the_normalised_names_sorted() -> None:
    bound = Bindings.assemble(ENTRIES)
    assert bound.idents == ("deploy", "drop_table", "fetch_data", "flaky")
    assert bound.tools == ("deploy", "drop_table", "fetch-data", "flaky")
    assert len(bound) == 4
    assert len(Bindings.empty()) == 0


def test_two_tools_normalising_to_one_identifier_are_refused_naming_both() -> None:
    with pytest.raises(BindingCollisionError) as info:
        Bindings.assemble([ToolEntry("get-logs"), ToolEntry("get_logs"), ToolEntry("other")])
    err = info.value
    assert err.ident == "get_logs"
    assert err.tools == ("get-logs", "get_logs")
    assert "'get-logs'" in str(err)
    assert "'get_logs'" in str(err)
    # one hierarchy for the package, and the tooldisclose one for collisions, and toolfail's kind
    assert isinstance(err, AssemblyError)
    assert isinstance(err, IdentCollisionError)
    assert toolfail.classify(err) is toolfail.Kind.INTERNAL


def test_collision_is_refused_whatever_the_order() -> None:
    with pytest.raises(BindingCollisionError):
        Bindings.assemble([ToolEntry("get_logs"), ToolEntry("get-logs")])


def test_a_tool_listed_twice_is_refused() -> None:
    with pytest.raises(AssemblyError, match="listed twice"):
        Bindings.assemble([FETCH, FETCH])


def test_colliding_parameter_labels_are_refused() -> None:
    entry = ToolEntry("t", params=(Param("a-b", True), Param("a_b")))
    with pytest.raises(AssemblyError, match="normalise to one label"):
        Bindings.assemble([entry])


def test_positional_form_follows_the_call_form_and_omits_absent_optionals() -> None:
    bound = Bindings.assemble([FETCH])
    assert bound.resolve("fetch_data", POSITIONAL, ["k"]) == ("fetch-data", {"key": "k"})
    assert bound.resolve("fetch_data", POSITIONAL, ["k", None, True]) == (
        "fetch-data",
        {"key": "k", "verbose": True},
    )
    with pytest.raises(CallFormError, match="required argument 'key'"):
        bound.resolve("fetch_data", POSITIONAL, [])
    with pytest.raises(CallFormError, match="at most 3"):
        bound.resolve("fetch_data", POSITIONAL, [1, 2, 3, 4])


def test_object_form_accepts_names_and_normalised_labels() -> None:
    bound = Bindings.assemble([FETCH])
    assert bound.resolve("fetch_data", OBJECT, {"key": "k", "max_items": 3}) == (
        "fetch-data",
        {"key": "k", "max-items": 3},
    )
    assert bound.resolve("fetch_data", OBJECT, {"key": "k", "max-items": 3, "extra": 1}) == (
        "fetch-data",
        {"key": "k", "max-items": 3, "extra": 1},
    )
    with pytest.raises(CallFormError, match="given twice"):
        bound.resolve("fetch_data", OBJECT, {"max-items": 1, "max_items": 2})


def test_unknown_identifier_and_wrong_payload_are_refused() -> None:
    bound = Bindings.assemble([FETCH])
    with pytest.raises(UnknownBindingError) as info:
        bound.resolve("nope", OBJECT, {})
    assert toolfail.classify(info.value) is toolfail.Kind.FORBIDDEN
    with pytest.raises(CallFormError, match="expected an object or positional"):
        bound.resolve("fetch_data", OBJECT, ["not", "an", "object"])
    with pytest.raises(CallFormError):
        bound.resolve("fetch_data", "keyword", {"key": 1})


def test_describe_lists_signatures_with_optional_marks() -> None:
    bound = Bindings.assemble([FETCH, ToolEntry("bare", description="First line.\nSecond.")])
    assert bound.describe().splitlines() == [
        "host.bare() — First line.",
        "host.fetch_data(key, max_items?, verbose?) — Fetch a record by key.",
    ]
    assert Bindings.assemble([ToolEntry("plain")]).describe() == "host.plain()"


@given(st.lists(st.one_of(st.none(), st.integers(), st.text(max_size=3)), min_size=1, max_size=3))
def test_positional_resolution_is_the_call_form_truth(values: list[object]) -> None:
    bound = Bindings.assemble([FETCH])
    if values[0] is None:
        with pytest.raises(CallFormError):
            bound.resolve("fetch_data", POSITIONAL, values)
        return
    tool, args = bound.resolve("fetch_data", POSITIONAL, values)
    assert tool == "fetch-data"
    assert args == args_from_positional(FETCH, values)
    assert None not in args.values()
