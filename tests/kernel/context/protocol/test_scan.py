"""protocol.scan: fences, balanced spans, and the structure gate before repair."""

from __future__ import annotations

import pytest

from yagent.kernel.context.protocol import scan
from yagent.kernel.context.protocol.scan import balanced, fences, structure_problem


def test_fences() -> None:
    text = "a\n```json\n{1}\n```\nb\n``` python \nx = 1\n```\n```unclosed\n{2}"
    assert list(fences(text)) == ["{1}\n", "x = 1\n"]


def test_balanced_spans_in_order_not_nested() -> None:
    assert list(balanced('x {"a": {"b": 1}} y {"c": "}"} z {')) == ['{"a": {"b": 1}}', '{"c": "}"}']


def test_braces_and_escaped_quotes_inside_strings_do_not_count() -> None:
    text = r'{"a": "a \" } { quote", "b": 1}'
    assert list(balanced(text)) == [text]


def test_unbalanced_openings_are_skipped_and_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    assert list(balanced("{ never closed {ok} ")) == ["{ok}"]
    assert list(balanced('{"open string } ')) == []
    monkeypatch.setattr(scan, "MAX_STARTS", 2)
    assert list(balanced("{ { { {x}")) == []


@pytest.mark.parametrize(
    "text",
    [
        '{"a": 1}',
        '{"a": 1,}',
        '{"a": }',
        '{"a": 1 "b": 2}',  # missing comma
        "{'a': 'it's fine'}",  # an apostrophe inside a value
        '{"a": "the "quoted" word"}',  # unescaped quotes inside a value
        '{"a": [1, {"b": 2}, [3]], "c": {"d": null}}',
        "{a: bare words, b: 2}",
        '{"a": "truncated',
        '{"a"',  # truncated right after a key
        '{"a": [1, 2',
        '{"a": 1 // a comment\n}',
        "{}",
        '{"a": 1}} extra',
    ],
)
def test_repairable_shapes_pass_the_gate(text: str) -> None:
    assert structure_problem(text) is None


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("no object at all", "no JSON object"),
        ('{"a" "b"}', "without a colon"),
        ('{"a": 1, "b" 2}', "without a colon"),
        ("{hello}", "without a colon"),
        ("{agent x}", "without a colon"),
        ("{a, b}", "without a colon"),
        ('{"a": {"b" "c"}}', "without a colon"),
        ('{"a": [{"b"}]}', "without a colon"),
        ("{:}", "without a key"),
        ("{{}}", "without a key"),
    ],
)
def test_structureless_shapes_are_refused(text: str, reason: str) -> None:
    problem = structure_problem(text)
    assert problem is not None
    assert reason in problem


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("{'a': 'it's fine', 'b': ['won't', 'x']}", '{"a": "it\'s fine", "b": ["won\'t", "x"]}'),
        ("{'a': 'say \"hi\" don\\'t'}", '{"a": "say \\"hi\\" don\'t"}'),
        ('{"a": "it\'s", \'b\': 1}', '{"a": "it\'s", "b": 1}'),  # double-quoted: as written
        ("{'a': 'cut off", '{"a": "cut off'),  # an unclosed string stays unclosed
        ("{'a': 'ends in \\'", '{"a": "ends in \''),  # an escaped quote closes nothing
        ('{"a": 1}', '{"a": 1}'),
    ],
)
def test_requote_writes_single_quoted_strings_as_json(text: str, want: str) -> None:
    assert scan.requote(text) == want
