"""The language tables name node types and fields that really exist in each grammar.

A misspelt node type in a table would never match and silently find nothing; this test turns
that into a failure."""

from __future__ import annotations

import pytest

from yagent.tools.codegraph.languages import EXTENSIONS, GO, PYTHON, Lang, language_for

LANGS = sorted({lang.name: lang for lang in EXTENSIONS.values()}.values(), key=lambda x: x.name)


@pytest.mark.parametrize("lang", LANGS, ids=lambda lang: lang.name)
def test_every_node_type_and_field_exists(lang: Lang) -> None:
    language = lang.language
    types = {*lang.definitions, *lang.names, *lang.calls, *lang.members, *lang.not_references}
    missing = [t for t in sorted(types) if not language.id_for_node_kind(t, True)]
    assert missing == [], f"{lang.name}: unknown node types {missing}"
    fields = {*lang.calls.values(), *lang.members.values(), *lang.name_fields}
    fields |= {f for f in lang.not_references.values() if f is not None}
    unknown = [f for f in sorted(fields) if language.field_id_for_name(f) is None]
    assert unknown == [], f"{lang.name}: unknown fields {unknown}"


def test_languages_by_extension() -> None:
    assert language_for("a/b.py") is PYTHON
    assert language_for("x.PYI") is PYTHON
    assert language_for("main.go") is GO
    assert {language_for(f"f{e}").name for e in (".js", ".mjs", ".cjs", ".jsx")} == {"javascript"}  # type: ignore[union-attr]
    assert {language_for(f"f{e}").name for e in (".ts", ".mts", ".cts")} == {"typescript"}  # type: ignore[union-attr]
    assert language_for("c.tsx").name == "tsx"  # type: ignore[union-attr]
    assert language_for("README.md") is None
    assert language_for("Makefile") is None


def test_queries_are_compiled_once_per_language_and_name() -> None:
    assert PYTHON.query("render") is PYTHON.query("render")
    assert PYTHON.query("render") is not PYTHON.query("other")
