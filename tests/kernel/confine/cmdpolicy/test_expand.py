"""Static expansion of words: quote removal, $'…', braces, what stays run-time — against bash."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from yagent.kernel.confine.cmdpolicy import Policy, UnjudgeableError, decide_command
from yagent.kernel.confine.cmdpolicy.expand import MAX_FIELDS, Dynamic, Field, ansi_c

from .test_differential import bash_runs

EMPTY = Policy([])


def read(word: str) -> tuple[Field, ...]:
    """The fields of `word` as the argument of one command."""
    verdict = decide_command(EMPTY, f"aa {word}")
    return tuple(f for arg in verdict.words[0].args[1:] for f in arg.expanded)


def texts(word: str) -> list[str | None]:
    return [f.static for f in read(word)]


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("plain", ["plain"]),
        ("r''m", ["rm"]),
        ('"rm"', ["rm"]),
        ("\\rm", ["rm"]),
        ("$'rm'", ["rm"]),
        ("$'\\x2f'etc", ["/etc"]),
        ("$'\\057'x", ["/x"]),
        ("$'a\\'b'", ["a'b"]),
        ("$'\\q'", ["\\q"]),
        ("$'\\u002f'", ["/"]),
        ('"a\\b\\$"', [None]),  # `\$` is refused, as before
        ('"a\\"b"', ['a"b']),
        ("{/a,b}.txt", ["/a.txt", "b.txt"]),
        ("{a,b}{1,2}", ["a1", "a2", "b1", "b2"]),
        ("x{,y}", ["x", "xy"]),
        ("{,z}", ["z"]),  # an empty field is dropped…
        ("''{,z}", ["", "z"]),  # …a quoted empty one is a word
        ("{1..3}", ["1", "2", "3"]),
        ("{3..1}", ["3", "2", "1"]),
        ("{01..03}", ["01", "02", "03"]),
        ("{a..e..2}", ["a", "c", "e"]),
        ("{-2..2..2}", ["-2", "0", "2"]),
        ("{a}", ["{a}"]),
        ("{a}{b,c}", ["{a}b", "{a}c"]),
        ("'{a,b}'", ["{a,b}"]),
        ("{a\\,b}", ["{a,b}"]),
        ("{a", ["{a"]),
        ("a}", ["a}"]),
        ('{1.."3"}', ["{1..3}"]),
        ("'*'.py", ["*.py"]),
        ("~", ["~"]),
    ],
)
def test_static_values(word: str, expected: list[str | None]) -> None:
    assert texts(word) == expected


@pytest.mark.parametrize(
    ("word", "kind"),
    [
        ("$X", Dynamic.PARAMETER),
        ('"$X"/a', Dynamic.PARAMETER),
        ("${X:-/etc}", Dynamic.PARAMETER),
        ("$1", Dynamic.PARAMETER),
        ("$(ls)", Dynamic.SUBSTITUTION),
        ("`ls`", Dynamic.SUBSTITUTION),
        ("$((1+2)).txt", Dynamic.INTEGER),
        ("$?", Dynamic.INTEGER),
        ("<(ls)", Dynamic.PROCESS),
        ('$"x"', Dynamic.UNREAD),
        ("$'a\\0b'", Dynamic.UNREAD),
        ("$'\\xff'", Dynamic.UNREAD),
        ("$'\\u00e9'", Dynamic.UNREAD),
        ("$'\\cA'", Dynamic.UNREAD),
        ("{a{b,c}}", Dynamic.UNREAD),
        ("{x{a,b}", Dynamic.UNREAD),
        ("{+1..3}", Dynamic.UNREAD),
        ("{Z..a}", Dynamic.UNREAD),
        ("{1..100000}", Dynamic.UNREAD),
    ],
)
def test_run_time_parts_are_named_never_valued(word: str, kind: Dynamic) -> None:
    found = read(word)
    assert all(f.static is None for f in found)
    assert any(kind in f.dynamic for f in found)


def test_probe_stands_in_only_for_integers_and_fds() -> None:
    (field,) = read("$((1+2)).txt")
    assert field.probe == "0.txt"
    (field,) = read("<(ls)")
    assert field.probe == "/dev/fd/63"
    (field,) = read("$X")
    assert field.probe is None


def test_globs_and_tilde() -> None:
    (field,) = read("src/*.py")
    assert field.static is None
    assert field.glob == "src/*.py"
    (field,) = read("'a*'b?")
    assert field.glob == "a[*]b?"
    (field,) = read("\\*x")
    assert field.static == "*x"
    assert field.glob is None
    assert [f.tilde for f in read("~ ~/a ~root/x")] == [True, True, True]
    assert [f.tilde for f in read("'~' \\~ ~\"x\"/a a~ --x=~/a")] == [False] * 5


def test_field_cap_is_a_run_time_word() -> None:
    side = int(MAX_FIELDS**0.5) + 1
    group = "{" + ",".join(str(i) for i in range(side)) + "}"
    found = read(group + group)
    assert len(found) == 1
    assert Dynamic.UNREAD in found[0].dynamic


def test_ansi_c_decoder() -> None:
    assert ansi_c("a\\tb\\x41\\101\\e") == "a\tbAA\x1b"
    assert ansi_c("\\x") is None
    assert ansi_c("tail\\") == "tail\\"


# -- against bash: every field read as static is exactly what bash passes ------------------------

_FRAGMENTS = [
    "a", "-y", "'b c'", '"d"', "$'\\x41'", "$'\\101'", "$'\\t'", "$'\\''", "{x,y}", "{1..3}",
    "{a..c..2}", "{01..3}", "{3..1}", ",", "{", "}", "..", "\\{", "'{'", '"}"', "=", "/", "\\,",
    "{,z}", "{p,{q,r}}", "''", "{,}", "\"\"{,a}", "$'\\u0041'", '"\\q"', "\\\\", "{-1..1}",
]  # fmt: skip


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(_FRAGMENTS), min_size=1, max_size=4))
def test_static_fields_are_what_bash_passes(fragments: list[str]) -> None:
    word = "".join(fragments)
    try:
        found = read(word)
    except UnjudgeableError:
        return
    if any(f.static is None or f.tilde for f in found):
        return  # no claim is made about run-time words
    (argv,) = bash_runs(f"aa {word}")
    assert list(argv[1:]) == [f.static for f in found], word
