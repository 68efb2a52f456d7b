"""toolname: identifier test, normalisation, collisions."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from yagent.kernel.judge.toolname import RESERVED, collisions, is_js_ident, normalize


def test_identifiers() -> None:
    for name in ("read_file", "$x", "_", "a1", "camelCase"):
        assert is_js_ident(name), name
    for name in ("", "1abc", "get-logs", "a.b", "a b", "class", "await", "naïve"):
        assert not is_js_ident(name), name


def test_normalize_examples() -> None:
    assert normalize("read_file") == "read_file"
    assert normalize("get-logs") == "get_logs"
    assert normalize("github.search issues") == "github_search_issues"
    assert normalize("1password") == "_1password"
    assert normalize("delete") == "delete_"
    assert normalize("") == "_"
    assert normalize("naïve") == "na_ve"


def test_normalize_not_unique_and_collisions_reported() -> None:
    assert normalize("get-logs") == normalize("get_logs")
    found = collisions(["get-logs", "get_logs", "other", "get.logs", "x"])
    assert found == {"get_logs": ("get-logs", "get.logs", "get_logs")}
    assert collisions(["a", "a"]) == {}


@given(st.text(max_size=40))
def test_normalize_always_yields_an_identifier(name: str) -> None:
    out = normalize(name)
    assert is_js_ident(out)
    assert re.fullmatch(r"[A-Za-z_$][A-Za-z0-9_$]*", out)
    assert out not in RESERVED
    if is_js_ident(name):
        assert out == name
