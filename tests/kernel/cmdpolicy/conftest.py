"""Shared fixtures: the allow-list policy the adversarial suite attacks."""

from __future__ import annotations

import pytest

from yagent.kernel.confine.cmdpolicy import Decision, Policy, Rule

A, P, F = Decision.ALLOW, Decision.PROMPT, Decision.FORBIDDEN


def allow_list() -> Policy:
    return Policy(
        [
            Rule(
                "git-status", ("git", "status"), A, match=("git status -s",), not_match=("git log",)
            ),
            Rule("git-log", ("git", "log"), A, match=("git log --oneline",)),
            Rule("git-diff", ("git", "diff"), A),
            Rule("ls", ("ls",), A, match=("ls -la src",)),
            Rule("cat", ("cat",), A, match=("cat README.md",)),
            Rule("echo", ("echo",), A, match=("echo hello",)),
            Rule("grep", ("grep",), A, match=("grep -rn TODO src",)),
            Rule("pytest", ("pytest",), A, match=("pytest -q tests",)),
            Rule("wc", ("wc",), A),
            Rule("head", ("head",), A),
            Rule("find", ("find",), A, match=("find . -name '*.py'",)),
            Rule(
                "rm-rf",
                ("rm", "-rf"),
                F,
                match=("rm -rf /", "/bin/rm -rf /"),
                not_match=("rm -r x",),
                justification="recursive forced delete",
            ),
            Rule("curl", ("curl",), F, match=("curl https://example.com",)),
        ]
    )


@pytest.fixture(scope="session")
def policy() -> Policy:
    return allow_list()
