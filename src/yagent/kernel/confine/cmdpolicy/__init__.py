"""cmdpolicy: command-level judgement of shell lines — token-prefix rules on a real bash AST.

Guarantees:
- Rules are token prefixes compared after POSIX tokenising, with three verdicts (allow < prompt <
  forbidden) and deterministic conflict resolution (longer prefix → stricter → smaller name).
- Each rule's `match` / `not_match` examples are run through the real decision path when a
  `Policy` is built; a disagreeing example is a `RuleExampleError`.
- `decide_command(policy, line)` judges every command the line can run — segments, pipelines,
  subshells, compound statements, function bodies, substitutions, executed heredocs, and what
  exec-style wrappers run — and takes the strictest verdict. Write redirections and dynamic code
  floor it at prompt; the `Verdict` carries `wrote`, `dynamic`, the deciding rules, per-command
  verdicts and an explanation.
- `split_commands` gives the token-level segments of a line, each re-tokenising to its own tokens.
Refuses: lines it cannot parse, that are too long or too deep (`UnjudgeableError`) — never allowed.
Leaves to the host: where rules come from, asking the human on prompt, and running the command
(a sandbox still bounds what an allowed command can do: see docs/security.md for the limits).
"""

from yagent.kernel.confine.cmdpolicy import decide
from yagent.kernel.confine.cmdpolicy.decide import CommandVerdict, Verdict, decide_command
from yagent.kernel.confine.cmdpolicy.errors import (
    CmdPolicyError,
    PolicyError,
    RuleExampleError,
    ShellSyntaxError,
    TooLargeError,
    UnclosedQuoteError,
    UnjudgeableError,
)
from yagent.kernel.confine.cmdpolicy.model import Permission, Signal, SignalKind
from yagent.kernel.confine.cmdpolicy.policy import DEFAULT_STEERING_ENV, Policy
from yagent.kernel.confine.cmdpolicy.rules import PrefixMatch, PrefixRule
from yagent.kernel.confine.cmdpolicy.tokens import Segment, Token, scan, split_commands, tokenize

__all__ = [
    "DEFAULT_STEERING_ENV",
    "CmdPolicyError",
    "CommandVerdict",
    "Permission",
    "Policy",
    "PolicyError",
    "PrefixMatch",
    "PrefixRule",
    "RuleExampleError",
    "Segment",
    "ShellSyntaxError",
    "Signal",
    "SignalKind",
    "Token",
    "TooLargeError",
    "UnclosedQuoteError",
    "UnjudgeableError",
    "Verdict",
    "decide",
    "decide_command",
    "scan",
    "split_commands",
    "tokenize",
]
