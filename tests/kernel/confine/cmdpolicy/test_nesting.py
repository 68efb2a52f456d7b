"""The syntax-depth limit: a line nested deeper than `MAX_SYNTAX_DEPTH` is refused unwalked."""

from __future__ import annotations

import pytest

from yagent.kernel.confine.cmdpolicy import Policy, TooLargeError, decide, decide_command
from yagent.kernel.confine.cmdpolicy.nesting import depth
from yagent.kernel.confine.cmdpolicy.syntax import _parser

LIMIT = decide.MAX_SYNTAX_DEPTH
POLICY = Policy(())


def substitutions(n: int) -> str:
    return "echo " + "$( " * n + "x" + " )" * n


def quoted_substitutions(n: int) -> str:  # each level is a string and a substitution
    return "echo " + '"$(' * n + "x" + ')"' * n


def subshells(n: int) -> str:
    return "( " * n + "ls" + " )" * n


def groups(n: int) -> str:
    return "{ " * n + "ls; " + "}; " * (n - 1) + "}"


def ifs(n: int) -> str:
    return "if true; then " * n + "ls; " + "fi; " * (n - 1) + "fi"


def test_the_limit_is_documented_and_generous() -> None:
    assert LIMIT == 64
    assert "MAX_SYNTAX_DEPTH" in (decide.__doc__ or "")


@pytest.mark.parametrize("build", [substitutions, subshells, groups, ifs])
def test_at_the_limit_judged_one_over_refused(build: object) -> None:
    assert callable(build)
    line_at, line_over = build(LIMIT), build(LIMIT + 1)
    assert depth(_parser().parse(line_at.encode()).root_node) == LIMIT
    decide_command(POLICY, line_at)  # judged (a verdict, whatever it is)
    with pytest.raises(TooLargeError, match=f"nests {LIMIT + 1} levels deep.*{LIMIT}-level"):
        decide_command(POLICY, line_over)


def test_quotes_count_as_nesting() -> None:
    half = LIMIT // 2
    decide_command(POLICY, quoted_substitutions(half))
    with pytest.raises(TooLargeError, match=f"nests {LIMIT + 2} levels"):
        decide_command(POLICY, quoted_substitutions(half + 1))


def test_siblings_do_not_add_up() -> None:
    line = "; ".join([substitutions(LIMIT)] * 3) + "; " + subshells(LIMIT)
    decide_command(POLICY, line)
    assert depth(_parser().parse(line.encode()).root_node) == LIMIT


def test_a_deep_line_under_the_byte_cap_is_refused_by_depth() -> None:
    line = substitutions(3000)
    assert len(line.encode()) < decide.MAX_LINE_BYTES
    with pytest.raises(TooLargeError, match="nests 3000 levels deep"):
        decide_command(POLICY, line)


def test_the_depth_is_checked_inside_inner_scripts_too() -> None:
    inner = subshells(LIMIT + 1)
    with pytest.raises(TooLargeError, match="levels deep"):
        decide_command(POLICY, f"sh -c '{inner}'")
