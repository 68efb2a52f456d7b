"""Word-level helpers: backtick bodies, heredoc text, gaps."""

from __future__ import annotations

import pytest

from yagent.kernel.confine.cmdpolicy import UnclosedQuoteError
from yagent.kernel.confine.cmdpolicy.words import (
    as_double_quoted,
    backtick_bodies,
    bare_newline,
    cut,
    glued,
    unescape_backtick,
)


def test_backtick_bodies() -> None:
    assert backtick_bodies("no ticks") == []
    assert backtick_bodies("a `b c` d `e`") == ["b c", "e"]
    assert backtick_bodies("a \\`b\\` c") == []
    assert backtick_bodies("`echo \\`x\\``") == ["echo \\`x\\`"]
    with pytest.raises(UnclosedQuoteError):
        backtick_bodies("a `b")


def test_unescape_backtick() -> None:
    assert unescape_backtick("echo \\`x\\` \\$y \\\\z \\n") == "echo `x` $y \\z \\n"


def test_as_double_quoted_keeps_meaning() -> None:
    assert (
        as_double_quoted('say "hi" \\" \\$x \\` \\\\ \\q')
        == 'say \\"hi\\" \\\\\\" \\$x \\` \\\\ \\\\q'
    )
    assert as_double_quoted("line\\\nnext") == "line\\\nnext"


def test_newline_gap_and_glue() -> None:
    assert bare_newline(b" \n ")
    assert not bare_newline(b" \\\n ")
    assert not bare_newline(b"   ")
    assert glued(b"\\\n")
    assert glued(b"\\\n\\\n")
    assert not glued(b"")
    assert not glued(b" \\\n")


def test_cut_removes_heredoc_bodies() -> None:
    data = b"0123456789"
    assert cut(data, 0, 10, [(2, 5)]) == b"0156789"
    assert cut(data, 3, 8, [(0, 4), (6, 7)]) == b"457"
    assert cut(data, 0, 4, [(6, 8)]) == b"0123"
