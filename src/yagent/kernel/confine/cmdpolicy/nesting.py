"""How deeply a parsed bash line nests, bounded before anything walks it.

Guarantees:
- `check(root, limit)` raises `TooLargeError` when some node sits inside more than `limit`
  nesting constructs: command and process substitutions, arithmetic expansions, `${ }`
  expansions, subshells, `{ }` groups, if/while/until/for/case bodies, function definitions,
  double-quoted strings and `[[ ]]` tests. A line within the limit passes unchanged.
- The count is iterative over the tree-sitter cursor (no recursion, O(nodes) time, O(depth)
  memory), so a line nested thousands deep costs what its AST costs and no more: the walkers that
  build facts from the tree never see it.
Leaves to the caller: the limit (`decide.MAX_SYNTAX_DEPTH`) and how an unreadable line is reported.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from yagent.kernel.confine.cmdpolicy.errors import TooLargeError

if TYPE_CHECKING:
    from tree_sitter import Node

NESTING_TYPES = frozenset(
    {
        "command_substitution",
        "process_substitution",
        "arithmetic_expansion",
        "expansion",
        "subshell",
        "compound_statement",
        "if_statement",
        "while_statement",
        "for_statement",
        "c_style_for_statement",
        "case_statement",
        "function_definition",
        "string",
        "test_command",
    }
)


def depth(root: Node) -> int:
    """The largest number of nesting constructs any node of the tree sits inside."""
    cursor = root.walk()
    level = 0
    deepest = 0
    counted: list[bool] = []  # one entry per ancestor on the cursor's path
    while True:
        nests = cursor.node is not None and cursor.node.type in NESTING_TYPES
        level += nests
        deepest = max(deepest, level)
        if cursor.goto_first_child():
            counted.append(nests)
            continue
        level -= nests
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return deepest
            level -= counted.pop()
        # the sibling is a fresh node: its nesting is added at the top of the loop


def check(root: Node, limit: int) -> None:
    """Raise `TooLargeError` when the tree nests deeper than `limit`."""
    found = depth(root)
    if found > limit:
        raise TooLargeError(
            f"the line nests {found} levels deep (substitutions, subshells, groups, quotes),"
            f" over the {limit}-level limit"
        )
