"""Rules: validation, deterministic conflict resolution, run-time words, basename matching."""

from __future__ import annotations

import pytest

from yagent.kernel.confine.cmdpolicy import Permission, Policy, PolicyError, PrefixRule, SignalKind
from yagent.kernel.judge import invoke

A, P, F = Permission.ALLOW, Permission.PROMPT, Permission.FORBIDDEN


def test_decision_strictness_and_ring_vocabulary() -> None:
    assert Permission.strictest(A, F, P) is F
    assert Permission.strictest(A, P) is P
    assert [d.to_invoke() for d in (A, P, F)] == [
        invoke.Decision.ALLOW,
        invoke.Decision.PROMPT,
        invoke.Decision.DENY,
    ]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"name": "", "prefix": ("ls",)}, "non-empty"),
        ({"name": "x", "prefix": ()}, "empty prefix"),
        ({"name": "x", "prefix": "ls"}, "sequence of strings"),
        ({"name": "x", "prefix": ("ls", 3)}, "only strings"),
        ({"name": "x", "prefix": ("ls", "")}, "NUL-bearing"),
        ({"name": "x", "prefix": ("l\x00s",)}, "NUL-bearing"),
        ({"name": "x", "prefix": ("ls",), "match": "ls -l"}, "sequence of strings"),
        ({"name": "x", "prefix": ("ls",), "verdict": "allow"}, "Permission"),
        ({"name": "x", "prefix": ("ls",), "justification": 3}, "justification"),
    ],
)
def test_malformed_rules_are_refused(kwargs: dict[str, object], message: str) -> None:
    args = {"verdict": A, **kwargs}
    with pytest.raises(PolicyError, match=message):
        PrefixRule(**args)  # type: ignore[arg-type]


def test_rule_fields_become_tuples() -> None:
    rule = PrefixRule("ls", ["ls"], A, match=["ls -l"])  # type: ignore[arg-type]
    assert rule.prefix == ("ls",)
    assert rule.match == ("ls -l",)


def test_longer_prefix_wins() -> None:
    policy = Policy([PrefixRule("git", ("git",), A), PrefixRule("git-push", ("git", "push"), F)])
    assert policy.decide(["git", "push", "origin"]).rule.name == "git-push"  # type: ignore[union-attr]
    assert policy.decide(["git", "status"]).rule.name == "git"  # type: ignore[union-attr]


def test_same_length_stricter_wins() -> None:
    policy = Policy([PrefixRule("a-allow", ("make",), A), PrefixRule("z-prompt", ("make",), P)])
    match = policy.decide(["make", "all"])
    assert match.decision is P
    assert match.rule is not None
    assert match.rule.name == "z-prompt"


def test_same_verdict_smallest_name_wins_whatever_the_order() -> None:
    rules = [
        PrefixRule("b", ("make",), P),
        PrefixRule("a", ("make",), P),
        PrefixRule("c", ("make",), P),
    ]
    for order in (rules, rules[::-1]):
        match = Policy(order).decide(["make"])
        assert match.rule is not None
        assert match.rule.name == "a"


def test_prefix_compares_whole_tokens() -> None:
    policy = Policy([PrefixRule("git-status", ("git", "status"), A)])
    assert policy.decide(["git", "statusx"]).rule is None
    assert policy.decide(["git"]).rule is None
    assert policy.decide(["git", "status", "-s"]).decision is A
    assert policy.decide([]).decision is P


def test_unmatched_gets_the_default() -> None:
    assert Policy([]).decide(["anything"]).decision is P
    assert Policy([], default=F).decide(["anything"]).decision is F


def test_run_time_word_matches_no_token_and_floors_a_would_be_allow() -> None:
    policy = Policy([PrefixRule("git", ("git",), A), PrefixRule("git-push", ("git", "push"), F)])
    decision, rule, signals = policy.judge_args(("git", None))
    assert decision is P
    assert rule is not None
    assert rule.name == "git"
    assert [s.kind for s in signals] == [SignalKind.UNCHECKABLE]  # the rule it may be forbids
    assert "git-push" in signals[0].detail


def test_run_time_word_that_cannot_change_the_winner_keeps_allow() -> None:
    policy = Policy([PrefixRule("git", ("git",), A), PrefixRule("git-push", ("git", "push"), F)])
    assert policy.judge_args(("git", "status", None))[0] is A
    allow_only = Policy([PrefixRule("ls", ("ls",), A), PrefixRule("ls-l", ("ls", "-l"), A)])
    assert allow_only.judge_args(("ls", None)) == (A, allow_only.rules[0], ())


def test_open_tail_could_complete_a_stricter_rule() -> None:
    policy = Policy([PrefixRule("rm", ("rm",), A), PrefixRule("rm-rf", ("rm", "-rf"), F)])
    assert policy.judge_args(("rm",), open_tail=False)[0] is A
    assert policy.judge_args(("rm",), open_tail=True)[0] is P


def test_possible_match_never_relaxes_a_forbid() -> None:
    policy = Policy(
        [PrefixRule("push", ("git", "push"), F), PrefixRule("dry", ("git", "push", "-n"), A)]
    )
    assert policy.judge_args(("git", "push", None))[0] is F


def test_path_qualified_command_forbidden_by_basename() -> None:
    policy = Policy([PrefixRule("rm-rf", ("rm", "-rf"), F)])
    decision, rule, _ = policy.judge_args(("/bin/rm", "-rf", "/"))
    assert decision is F
    assert rule is not None
    assert rule.name == "rm-rf"


def test_path_qualified_command_is_not_allowed_by_basename() -> None:
    policy = Policy([PrefixRule("ls", ("ls",), A)])
    for head in ("./ls", "/tmp/ls", "bin/ls/"):
        decision, rule, signals = policy.judge_args((head,))
        assert decision is P
        assert rule is not None
        assert rule.name == "ls"
        assert [s.kind for s in signals] == [SignalKind.PATH]


def test_exact_path_rule_is_honoured() -> None:
    policy = Policy([PrefixRule("usr-ls", ("/usr/bin/ls",), A), PrefixRule("ls", ("ls",), F)])
    assert policy.judge_args(("/usr/bin/ls", "-l"))[0] is A
    assert policy.judge_args(("/bin/ls",))[0] is F


def test_basename_route_also_sees_ambiguity() -> None:
    policy = Policy([PrefixRule("rm", ("rm",), A), PrefixRule("rm-rf", ("rm", "-rf"), F)])
    decision, _, signals = policy.judge_args(("/bin/rm", None))
    assert decision is P
    assert {s.kind for s in signals} == {SignalKind.PATH, SignalKind.UNCHECKABLE}
