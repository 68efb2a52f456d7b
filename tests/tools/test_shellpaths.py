"""The shell path check: every path a command line names, read after static expansion.

A process substitution is a /dev/fd path bash makes (quiet); a safe system path holding the
workspace (here /tmp) excuses nothing.
The workspace is `tmp/ws`; the "outside" target is a sibling, `tmp/secret/id_rsa`. Both live under
/tmp — a safe system path — which must not excuse the sibling: a safe path that holds the
workspace makes nothing next to it safe.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from yagent.tools.guard import WorkspaceGuard
from yagent.toolspec.builtin import builtin_by_name

BASH = builtin_by_name()["run_bash"]


@pytest.fixture
def secret(workspace: Path) -> Path:
    target = workspace.parent / "secret" / "id_rsa"
    target.parent.mkdir()
    target.write_text("-----BEGIN KEY-----\n")
    (workspace / "sub").mkdir()
    (workspace / "sub" / "b.txt").write_text("b\n")
    return target


def reason(workspace: Path, line: str) -> str | None:
    return WorkspaceGuard(workspace).danger(BASH, {"command": line})


def _hex(path: Path) -> str:
    return "$'" + "".join(f"\\x{ord(c):02x}" for c in str(path)) + "'"


def _deep(workspace: Path, target: Path) -> str:
    return "../" * len(workspace.parts) + str(target).lstrip("/")


# The issue's reproductions, each an ask today's guard let through.
ISSUE = [
    lambda ws, s: f"cat {_deep(ws, s)}",
    lambda ws, s: f"cat {_hex(s)}",
    lambda ws, s: f"cat {{{s},a.txt}}",
    lambda ws, s: "grep -r KEY ../..",
    lambda ws, s: "git diff --no-index ../secret/id_rsa a.txt",
]


@pytest.mark.parametrize("build", ISSUE, ids=["relative", "ansi-c", "braces", "grep-r", "git-diff"])
def test_the_issue_reproductions_ask(workspace: Path, secret: Path, build: object) -> None:
    line = build(workspace, secret)  # type: ignore[operator]
    assert reason(workspace, line) is not None, line


@pytest.mark.parametrize(
    "line",
    [
        "cat ../secret/id_rsa",
        "cat sub/../../secret/id_rsa",
        "cat '../secret'/id_rsa",
        "cat --file=../secret/id_rsa",
        "tool -o../secret/x",
        "cat < ../secret/id_rsa",
        "cat a.txt > ../secret/x",
        "cat {a,../secret/id_rsa}",
        "cd .. && cat secret/id_rsa",
        "cd sub; cd ../..; ls",
        "cd sub && cat ../a.txt",  # judged from every directory the line may be in
        "cd /proc/self && cat root/etc/hostname",
        "cd && cat .ssh/id_rsa",
        "cd - && ls",
        "cd $X && ls",
        "git -C .. diff",
        "make --directory=.. all",
        "tar -C/proc/self -cf - root",
        "cat ../*/id_rsa",
        "cat .*/secret/id_rsa",
        "cat ~/.ssh/id_rsa",
        "cat ~root/.ssh/id_rsa",
        "ls ~/.ssh/*",
        "cat $HOME/.ssh/id_rsa",
        'cat "$(printf ../secret/id_rsa)"',
        "cat `echo x`",
        "sh -c 'cat ../secret/id_rsa'",
        "bash <<EOF\ncat ../secret/id_rsa\nEOF",
        "echo ../secret/id_rsa | xargs cat",
        "env cat ../secret/id_rsa",
        "ls /*",
        "cat /etc/shadow",
    ],
)
def test_outside_paths_ask(workspace: Path, secret: Path, line: str) -> None:
    assert reason(workspace, line) is not None, line


@pytest.mark.parametrize(
    "line",
    [
        "ls *.py",
        "cat a.txt sub/b.txt",
        "cat sub/../a.txt",
        "cat {a,sub/b}.txt",
        "cat sub/*.txt",
        "echo $HOME",
        "printf '%s\\n' \"$PATH\" $(date)",
        "head -n $((1+2)) a.txt",
        "diff <(ls) a.txt",
        "ls > /dev/null 2>&1",
        "/usr/bin/python3 -V",
        "cut -d/ -f1 a.txt",
        "git log --oneline -5",
        "grep -rn TODO .",
        "python3 -c 'print(1/2)'",
        "for f in 1 2; do echo $f; done",
        "ls -la && wc -l a.txt",
        "kill -0 $$",
        "cat /usr/share/dict/words",
    ],
)
def test_paths_inside_or_safe_stay_quiet(workspace: Path, secret: Path, line: str) -> None:
    assert reason(workspace, line) is None, line


def test_a_symbolic_link_a_glob_can_reach_asks(workspace: Path, secret: Path) -> None:
    (workspace / "keys").symlink_to(secret.parent)
    assert reason(workspace, "cat */id_rsa") is not None
    assert "keys" in (reason(workspace, "cat k*/id_rsa") or "")
    assert reason(workspace, "cat KEY?/id_rsa") is not None  # matched loosely: any case
    assert reason(workspace, "cat *.txt") is None  # the link cannot match
    assert reason(workspace, "cat keys/id_rsa") is not None  # a static word through the link


def test_a_glob_over_too_many_entries_asks(
    workspace: Path, secret: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from yagent.tools import shellpaths

    assert shellpaths.MAX_GLOB_ENTRIES > 1
    monkeypatch.setattr(shellpaths, "MAX_GLOB_ENTRIES", 1)
    assert "more than 1" in (reason(workspace, "ls *") or "")


def test_the_reason_names_the_path(workspace: Path, secret: Path) -> None:
    assert "../secret/id_rsa outside the workspace" in (
        reason(workspace, "git diff --no-index ../secret/id_rsa a.txt") or ""
    )
    assert "known only at run time" in (reason(workspace, "cat $F") or "")
    assert "cannot be read" in (reason(workspace, "cat 'open") or "")
