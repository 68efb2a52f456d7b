"""Policy: load-time example checking on the real decision path, defaults, loaders."""

from __future__ import annotations

from typing import Any

import pytest

from yagent.kernel.confine.cmdpolicy import (
    DEFAULT_STEERING_ENV,
    Permission,
    Policy,
    PolicyError,
    PrefixRule,
    RuleExampleError,
)

A, P, F = Permission.ALLOW, Permission.PROMPT, Permission.FORBIDDEN


def test_good_examples_load() -> None:
    policy = Policy(
        [
            PrefixRule("git", ("git",), A, match=("git log",), not_match=("git push",)),
            PrefixRule("git-push", ("git", "push"), F, match=("git push origin main",)),
        ]
    )
    assert [r.name for r in policy.rules] == ["git", "git-push"]


def test_match_example_decided_by_a_longer_rule_is_a_load_error() -> None:
    with pytest.raises(RuleExampleError) as info:
        Policy(
            [
                PrefixRule("git", ("git",), A, match=("git push",)),
                PrefixRule("git-push", ("git", "push"), F),
            ]
        )
    assert info.value.rule == "git"
    assert info.value.example == "git push"
    assert "git-push" in str(info.value)


def test_match_example_that_never_matches_is_a_load_error() -> None:
    with pytest.raises(RuleExampleError, match=r"'ls'.*'dir'"):
        Policy([PrefixRule("ls", ("ls",), A, match=("dir",))])


def test_match_example_is_judged_with_ast_facts() -> None:
    # The prefix matches, but the redirect floors the line at prompt: not decided as allow.
    with pytest.raises(RuleExampleError, match="decided prompt"):
        Policy([PrefixRule("echo", ("echo",), A, match=("echo x > /etc/passwd",))])
    # A later segment that the rule never sees still changes the line's decision.
    with pytest.raises(RuleExampleError, match="forbidden by rm"):
        Policy(
            [
                PrefixRule("echo", ("echo",), A, match=("echo x; rm -rf /",)),
                PrefixRule("rm", ("rm",), F),
            ]
        )


def test_not_match_example_decided_by_the_rule_is_a_load_error() -> None:
    with pytest.raises(RuleExampleError) as info:
        Policy([PrefixRule("rm-rf", ("rm", "-rf"), F, not_match=("'rm' -rf /tmp",))])
    assert info.value.rule == "rm-rf"
    assert info.value.example == "'rm' -rf /tmp"
    assert "not_match" in info.value.reason


def test_unjudgeable_example_is_a_load_error() -> None:
    with pytest.raises(RuleExampleError, match="cannot be judged"):
        Policy([PrefixRule("ls", ("ls",), A, match=("ls 'open",))])
    with pytest.raises(RuleExampleError, match="cannot be judged"):
        Policy([PrefixRule("ls", ("ls",), A, not_match=("if then",))])


def test_conflict_loser_with_examples_surfaces_at_load() -> None:
    with pytest.raises(RuleExampleError, match="'make-ok'"):
        Policy(
            [
                PrefixRule("make-ok", ("make",), A, match=("make",)),
                PrefixRule("make-ask", ("make",), P),
            ]
        )


def test_default_allow_is_refused() -> None:
    with pytest.raises(PolicyError, match="deny-list"):
        Policy([], default=A)
    with pytest.raises(PolicyError, match="Permission"):
        Policy([], default="prompt")  # type: ignore[arg-type]
    assert Policy([], default=F).default is F


def test_duplicate_names_and_non_rules_are_refused() -> None:
    with pytest.raises(PolicyError, match="duplicate"):
        Policy([PrefixRule("x", ("ls",), A), PrefixRule("x", ("cat",), A)])
    with pytest.raises(PolicyError, match="not a PrefixRule"):
        Policy(["ls"])  # type: ignore[list-item]
    with pytest.raises(PolicyError, match="steering_env"):
        Policy([], steering_env=["PATH", ""])


def test_with_rules_adds_and_rechecks() -> None:
    base = Policy([PrefixRule("ls", ("ls",), A)])
    more = base.with_rules(PrefixRule("cat", ("cat",), A, match=("cat x",)))
    assert [r.name for r in more.rules] == ["cat", "ls"]
    assert [r.name for r in base.rules] == ["ls"]
    with pytest.raises(RuleExampleError):
        base.with_rules(PrefixRule("cat", ("cat",), A, match=("ls",)))


def test_steering_patterns() -> None:
    policy = Policy([])
    assert policy.steering_env == DEFAULT_STEERING_ENV
    for name in ("PATH", "LD_PRELOAD", "GIT_SSH_COMMAND", "PAGER", "PYTHONPATH", "BASH_ENV"):
        assert policy.is_steering(name)
    for name in ("CI", "FOO", "path", "TERM"):
        assert not policy.is_steering(name)
    assert Policy([], steering_env=["FOO"]).is_steering("FOO")


def _doc(**overrides: Any) -> dict[str, Any]:
    rule = {
        "name": "git-status",
        "prefix": "git status",
        "verdict": "allow",
        "match": "git status -s",
        "not_match": ["git stash"],
        "justification": "read-only",
    }
    return {"default": "prompt", "rules": [{**rule, **overrides}]}


def test_from_mapping() -> None:
    policy = Policy.from_mapping(_doc())
    (rule,) = policy.rules
    assert rule.prefix == ("git", "status")
    assert rule.match == ("git status -s",)
    assert rule.justification == "read-only"
    assert policy.default is P


def test_from_mapping_table_of_tables_and_quoted_prefix() -> None:
    policy = Policy.from_mapping(
        {
            "rules": {"say": {"prefix": "echo 'two words'", "verdict": "prompt"}},
            "default": "forbidden",
        }
    )
    assert policy.rules[0].name == "say"
    assert policy.rules[0].prefix == ("echo", "two words")
    assert policy.default is F


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ({"rules": [], "extra": 1}, r"unknown key\(s\) \['extra'\]"),
        (_doc(pattern="x"), r"unknown key\(s\) \['pattern'\]"),
        (_doc(verdict="deny"), "'deny' is not one of"),
        ({"default": "allow"}, "deny-list"),
        ({"default": "maybe"}, "not one of"),
        (_doc(prefix="ls; rm"), "shell operator"),
        ({"rules": [{"name": "x", "verdict": "allow"}]}, "missing 'prefix'"),
        ({"rules": [{"prefix": "ls", "verdict": "allow"}]}, "name must be a string"),
        ({"rules": ["ls"]}, "must be a table"),
        ({"rules": "ls"}, "list of tables"),
        ({"steering_env": "PATH"}, "list of strings"),
    ],
)
def test_from_mapping_errors(doc: dict[str, Any], message: str) -> None:
    with pytest.raises(PolicyError, match=message):
        Policy.from_mapping(doc)


def test_from_mapping_requires_a_mapping() -> None:
    with pytest.raises(PolicyError, match="mapping"):
        Policy.from_mapping(["x"])  # type: ignore[arg-type]


def test_from_toml() -> None:
    policy = Policy.from_toml(
        """
        default = "prompt"
        steering_env = ["PATH"]

        [[rules]]
        name = "pytest"
        prefix = ["pytest"]
        verdict = "allow"
        match = ["pytest -q"]
        """
    )
    assert policy.rules[0].name == "pytest"
    assert policy.steering_env == ("PATH",)
    with pytest.raises(PolicyError, match="TOML"):
        Policy.from_toml("rules = [")
