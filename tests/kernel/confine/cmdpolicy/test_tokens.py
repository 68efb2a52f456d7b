"""Tokenising and splitting: POSIX shlex semantics, operators, and the segment round trip."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from yagent.kernel.confine.cmdpolicy import UnclosedQuoteError, scan, split_commands, tokenize


def test_backslash_inside_double_quotes_is_kept() -> None:
    assert tokenize('echo "a\\b"') == ("echo", "a\\b")
    assert tokenize('echo "a\\"b"') == ("echo", 'a"b')
    assert tokenize("echo a\\b") == ("echo", "ab")


def test_separators_merge_only_when_touching() -> None:
    assert tokenize("a & & b") == ("a", "&", "&", "b")
    assert tokenize("a && b") == ("a", "&&", "b")
    assert tokenize("a&&b") == ("a", "&&", "b")


def test_carriage_return_is_whitespace() -> None:
    assert tokenize("git status\r\n") == ("git", "status", "\n")
    assert tokenize("ls -l\r") == ("ls", "-l")


def test_quotes_and_whitespace_do_not_shift_tokens() -> None:
    expected = ("git", "status")
    for line in ("git status", "  git\t status ", "'git' \"status\"", "g'i't st\"at\"us"):
        assert tokenize(line) == expected


def test_empty_quoted_word_is_a_token() -> None:
    assert tokenize("echo '' \"\"") == ("echo", "", "")


def test_quoted_or_escaped_operator_is_a_word() -> None:
    toks = scan("echo '&&' \\; x;y")
    assert [(t.text, t.operator) for t in toks] == [
        ("echo", False),
        ("&&", False),
        (";", False),
        ("x", False),
        (";", True),
        ("y", False),
    ]


def test_operator_runs_are_cut_into_shell_operators() -> None:
    assert tokenize("a;;&b") == ("a", ";;&", "b")
    assert tokenize("a&&&b") == ("a", "&&", "&", "b")
    assert tokenize("a;\nb") == ("a", ";", "\n", "b")
    assert tokenize("echo 2>&1|cat") == ("echo", "2", ">&", "1", "|", "cat")


def test_token_spans_point_into_the_line() -> None:
    line = "  echo 'a b'  &&x"
    for tok in scan(line):
        assert tok.start < tok.end <= len(line)
    assert [line[t.start : t.end] for t in scan(line)] == ["echo", "'a b'", "&&", "x"]


@pytest.mark.parametrize("line", ['echo "open', "echo 'open", "echo trailing\\"])
def test_unclosed_quote_is_refused(line: str) -> None:
    with pytest.raises(UnclosedQuoteError):
        tokenize(line)


def test_split_on_every_separator() -> None:
    line = "a 1; b 2 && c || d | e |& f & g\nh"
    segments = split_commands(line)
    assert [s.tokens for s in segments] == [
        ("a", "1"),
        ("b", "2"),
        ("c",),
        ("d",),
        ("e",),
        ("f",),
        ("g",),
        ("h",),
    ]
    assert [s.separator for s in segments] == [";", "&&", "||", "|", "|&", "&", "\n", ""]


def test_split_drops_empty_segments_and_keeps_redirections() -> None:
    segments = split_commands(";; ls >out 2>&1 ;\n\n")
    assert [s.tokens for s in segments] == [("ls", ">", "out", "2", ">&", "1")]
    assert segments[0].text == "ls >out 2>&1"


def test_segment_text_is_quoted_and_replayable() -> None:
    (seg,) = split_commands("git commit -m 'two words' ''")
    assert seg.text == "git commit -m 'two words' ''"
    assert tokenize(seg.text) == seg.tokens


def test_segments_round_trip_with_operators_and_specials() -> None:
    line = "echo 'a;b' \"c&&d\" e\\|f > 'out file'; x=$(y) && (z) \t # c"
    for seg in split_commands(line):
        again = scan(seg.text)
        assert tuple(t.text for t in again) == seg.tokens
        assert [t.operator for t in again] == [t.operator for t in scan(seg.text)]


_WORDS = st.text(alphabet=st.sampled_from(list("ab $*'\"\\;&|<>()\n\t\r#=~{}")), max_size=12)


@settings(max_examples=300, deadline=None)
@given(st.lists(_WORDS, max_size=6))
def test_round_trip_property(parts: list[str]) -> None:
    line = " ".join(parts)
    try:
        segments = split_commands(line)
    except UnclosedQuoteError:
        return
    for seg in segments:
        again = scan(seg.text)
        assert tuple(t.text for t in again) == seg.tokens
        assert not any(t.operator and t.text in {";", "&&", "||", "|", "&", "\n"} for t in again)
