"""tooldisclose call forms: the one truth a program calls loaded tools by."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from yagent.kernel.judge import toolname
from yagent.kernel.judge.tooldisclose import (
    CallFormError,
    Catalog,
    Disclosure,
    IdentCollisionError,
    Param,
    ToolEntry,
    args_from_positional,
    call_form,
    call_forms,
)

SEARCH = ToolEntry(
    "search-issues",
    params=(
        Param("limit", False, "max"),
        Param("query", True, "text"),
        Param("state", False, "open or closed"),
        Param("repo", True, "where"),
    ),
)


def test_signature_puts_required_first_in_declared_order_then_marks_optionals() -> None:
    form = call_form(SEARCH)
    assert form.tool == "search-issues"
    assert form.ident == "search_issues"
    assert form.params == ("query", "repo", "limit", "state")
    assert form.required == 2
    assert form.signature == "search_issues(query, repo, limit?, state?)"


def test_identifiers_come_from_toolname() -> None:
    for name in ("delete", "2fa-reset", "ns.tool", "ok_name", "$x"):
        form = call_form(ToolEntry(name))
        assert form.ident == toolname.normalize(name)
        assert toolname.is_js_ident(form.ident)
        assert form.signature == f"{form.ident}()"


def test_parameter_labels_are_normalised_but_json_keys_stay_original() -> None:
    entry = ToolEntry("t", params=(Param("class", True), Param("page-size")))
    form = call_form(entry)
    assert form.signature == "t(class_, page_size?)"
    assert args_from_positional(entry, ["A", 5]) == {"class": "A", "page-size": 5}


def test_omitted_optionals_are_absent_not_null() -> None:
    assert args_from_positional(SEARCH, ["bug", "acme/web"]) == {"query": "bug", "repo": "acme/web"}
    args = args_from_positional(SEARCH, ["bug", "acme/web", None, "open"])
    assert args == {"query": "bug", "repo": "acme/web", "state": "open"}
    assert "limit" not in args


def test_falsy_values_that_are_not_none_are_kept() -> None:
    args = args_from_positional(SEARCH, ["", "r", 0, False])
    assert args == {"query": "", "repo": "r", "limit": 0, "state": False}


def test_missing_required_value_is_refused_with_the_form() -> None:
    with pytest.raises(
        CallFormError, match=r"search_issues\(query, repo, limit\?, state\?\).*'repo'"
    ):
        args_from_positional(SEARCH, ["bug"])
    with pytest.raises(CallFormError, match="'query'"):
        args_from_positional(SEARCH, [None, "r"])


def test_too_many_values_are_refused() -> None:
    with pytest.raises(CallFormError, match="at most 4 arguments, got 5"):
        args_from_positional(SEARCH, [1, 2, 3, 4, 5])


def test_call_forms_refuse_tools_that_normalise_to_one_identifier() -> None:
    with pytest.raises(IdentCollisionError, match="get_logs"):
        call_forms([ToolEntry("get-logs"), ToolEntry("get_logs")])


def test_call_form_refuses_colliding_parameter_labels() -> None:
    with pytest.raises(IdentCollisionError, match="page_size"):
        call_form(ToolEntry("t", params=(Param("page-size"), Param("page_size"))))


def test_call_forms_are_sorted_by_identifier() -> None:
    forms = call_forms([ToolEntry("b.tool"), ToolEntry("a-tool"), ToolEntry("c")])
    assert [f.ident for f in forms] == ["a_tool", "b_tool", "c"]
    assert issubclass(IdentCollisionError, CallFormError)


_names = st.lists(
    st.text(alphabet="abcdefghij", min_size=1, max_size=6), min_size=0, max_size=6, unique=True
)


@given(_names, st.data())
def test_positional_mapping_property(names: list[str], data: st.DataObject) -> None:
    required = data.draw(st.lists(st.booleans(), min_size=len(names), max_size=len(names)))
    entry = ToolEntry("t", params=tuple(Param(n, r) for n, r in zip(names, required, strict=True)))
    form = call_form(entry)
    n_required = sum(required)
    count = data.draw(st.integers(min_value=n_required, max_value=len(names)))
    values: list[Any] = data.draw(
        st.lists(st.one_of(st.none(), st.integers()), min_size=count, max_size=count)
    )
    for i in range(n_required):
        if values[i] is None:
            values[i] = i
    args = args_from_positional(entry, values)
    assert None not in args.values()
    assert set(args) <= set(names)
    assert all(p.name in args for p in entry.required)
    assert list(args) == [p for p in form.params if p in args]
    assert form.signature.count("?") == len(names) - n_required


def test_forms_of_a_runs_visible_tools() -> None:
    catalog = Catalog([SEARCH, ToolEntry("ping"), ToolEntry("unused")])
    disclosure = Disclosure(catalog, always={"ping"})
    disclosure.load(["search-issues"])
    forms = call_forms(disclosure.visible_entries())
    assert [f.signature for f in forms] == ["ping()", "search_issues(query, repo, limit?, state?)"]
