"""cmdpolicy errors: one hierarchy, rooted at `CmdPolicyError`.

Two families: `PolicyError` (a policy that cannot be built — refused at load, never at use) and
`UnjudgeableError` (a command line the guard cannot judge — the caller must not run it).
"""

from __future__ import annotations


class CmdPolicyError(Exception):
    """Root of every error cmdpolicy raises."""


class PolicyError(CmdPolicyError):
    """A rule set or policy document is malformed (unknown key, bad verdict, duplicate name…)."""


class RuleExampleError(PolicyError):
    """A rule's own `match` / `not_match` example disagrees with the real decision path."""

    def __init__(self, rule: str, example: str, reason: str) -> None:
        super().__init__(f"rule {rule!r}: example {example!r} {reason}")
        self.rule = rule
        self.example = example
        self.reason = reason


class UnjudgeableError(CmdPolicyError):
    """The line cannot be judged; it is never allowed. `reason` says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class UnclosedQuoteError(UnjudgeableError):
    """A quote (or a trailing escape) is left open."""


class ShellSyntaxError(UnjudgeableError):
    """The bash grammar does not accept the line (ERROR or MISSING nodes in the AST)."""


class TooLargeError(UnjudgeableError):
    """The line, its AST or its nesting of inner scripts is over a cap."""
