"""Shared fixtures: the allow-list policy the adversarial suite attacks."""

from __future__ import annotations

import pytest

from yagent.kernel.confine.cmdpolicy import Permission, Policy, PrefixRule

A, P, F = Permission.ALLOW, Permission.PROMPT, Permission.FORBIDDEN


def allow_list() -> Policy:
    return Policy(
        [
            PrefixRule(
                "git-status", ("git", "status"), A, match=("git status -s",), not_match=("git log",)
            ),
            PrefixRule("git-log", ("git", "log"), A, match=("git log --oneline",)),
            PrefixRule("git-diff", ("git", "diff"), A),
            PrefixRule("ls", ("ls",), A, match=("ls -la src",)),
            PrefixRule("cat", ("cat",), A, match=("cat README.md",)),
            PrefixRule("echo", ("echo",), A, match=("echo hello",)),
            PrefixRule("grep", ("grep",), A, match=("grep -rn TODO src",)),
            PrefixRule("pytest", ("pytest",), A, match=("pytest -q tests",)),
            PrefixRule("wc", ("wc",), A),
            PrefixRule("head", ("head",), A),
            PrefixRule("find", ("find",), A, match=("find . -name '*.py'",)),
            PrefixRule(
                "rm-rf",
                ("rm", "-rf"),
                F,
                match=("rm -rf /", "/bin/rm -rf /"),
                not_match=("rm -f x", "rm -d x"),  # not recursive (-f and -i are noise)
                justification="recursive forced delete",
            ),
            PrefixRule("curl", ("curl",), F, match=("curl https://example.com",)),
        ]
    )


@pytest.fixture(scope="session")
def policy() -> Policy:
    return allow_list()
