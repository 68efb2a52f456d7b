"""toolspec.claudetools: Claude Code's tool names onto yagent's, one table, unknowns refused."""

from __future__ import annotations

import pytest

from yagent.toolspec.builtin import BUILTIN
from yagent.toolspec.claudetools import CLAUDE_TOOLS, ToolNameError, parse, split_names, to_yagent

KNOWN = [s.name for s in BUILTIN]


def test_every_mapped_name_is_a_real_yagent_tool() -> None:
    for targets in CLAUDE_TOOLS.values():
        assert set(targets) <= set(KNOWN)


def test_names_split_and_parse_like_claude_writes_them() -> None:
    assert split_names("Read, Grep Glob, Bash(git add:*, x)") == [
        "Read",
        "Grep",
        "Glob",
        "Bash(git add:*, x)",
    ]
    assert split_names(["Read", " Edit "]) == ["Read", "Edit"]
    assert parse("Bash(git status:*)") == ("Bash", "git status:*")
    assert parse("Read") == ("Read", None)
    with pytest.raises(ToolNameError):
        split_names(3)


def test_mapping_own_names_unsupported_and_unknown() -> None:
    assert to_yagent("Edit", KNOWN) == ("search_replace_in_file",)
    assert to_yagent("Glob", KNOWN) == ("list_dir", "print_dir_tree")
    assert to_yagent("find_definitions", KNOWN) == ("find_definitions",)
    with pytest.raises(ToolNameError, match="no web search"):
        to_yagent("WebSearch", KNOWN)
    with pytest.raises(ToolNameError, match="did you mean Read"):
        to_yagent("Raed", KNOWN)
    with pytest.raises(ToolNameError, match="external"):
        to_yagent("mcp__github__issues", KNOWN)
