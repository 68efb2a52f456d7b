"""decide_command: whole-line judgement on the AST, facts, floors, caps and explanations."""

from __future__ import annotations

import pytest

from yagent.kernel.confine.cmdpolicy import (
    Permission,
    Policy,
    PrefixRule,
    ShellSyntaxError,
    SignalKind,
    TooLargeError,
    UnclosedQuoteError,
    UnjudgeableError,
    decide,
    decide_command,
)
from yagent.kernel.judge import invoke, toolfail

A, P, F = Permission.ALLOW, Permission.PROMPT, Permission.FORBIDDEN


def kinds(policy: Policy, line: str) -> set[SignalKind]:
    verdict = decide_command(policy, line)
    return {s.kind for s in verdict.signals} | {s.kind for c in verdict.commands for s in c.signals}


def test_strictest_segment_wins(policy: Policy) -> None:
    verdict = decide_command(policy, "git status; rm -rf /")
    assert verdict.decision is F
    assert [r.name for r in verdict.rules] == ["rm-rf"]
    assert [c.argv for c in verdict.commands] == [("git", "status"), ("rm", "-rf", "/")]
    assert [c.decision for c in verdict.commands] == [A, F]


def test_allowed_line_names_its_rules(policy: Policy) -> None:
    verdict = decide_command(policy, "ls -la && git status | grep x")
    assert verdict.allowed
    assert [r.name for r in verdict.rules] == ["git-status", "grep", "ls"]
    assert not verdict.wrote
    assert not verdict.dynamic
    assert verdict.signals == ()


def test_unmatched_command_gets_the_default(policy: Policy) -> None:
    verdict = decide_command(policy, "make all")
    assert verdict.decision is P
    assert verdict.rules == ()
    forbid_default = Policy([PrefixRule("ls", ("ls",), A)], default=F)
    assert decide_command(forbid_default, "make").decision is F
    assert decide_command(forbid_default, "ls").decision is A


def test_line_without_commands_gets_the_default(policy: Policy) -> None:
    for line in ("", "   ", "# just a comment", "X=1"):
        verdict = decide_command(policy, line)
        assert verdict.decision is P
        assert verdict.commands == ()
        assert "no command" in verdict.explain()


@pytest.mark.parametrize(
    ("line", "wrote"),
    [
        ("echo x > f", True),
        ("echo x >> f", True),
        ("ls &> f", True),
        ("ls &>> f", True),
        ("ls >| f", True),
        ("ls >& f", True),
        ("ls 2> err.log", True),
        ("ls > $OUT", True),
        ("ls >& $FD", True),
        ("{ ls; } > f", True),
        ("for i in 1; do ls; done > f", True),
        ("ls 2>&1", False),
        ("ls >&2", False),
        ("ls 2>&-", False),
        ("ls >/dev/null 2>&1", False),
        ("ls 2>/dev/stderr 1>/dev/stdout", False),
        ("cat < input.txt", False),
        ("grep x <<< 'hello'", False),
    ],
)
def test_write_redirections(policy: Policy, line: str, wrote: bool) -> None:
    verdict = decide_command(policy, line)
    assert verdict.wrote is wrote
    assert verdict.decision is (P if wrote else A)


@pytest.mark.parametrize(
    "line",
    [
        "echo $(ls)",
        "echo `ls`",
        "cat <(ls)",
        "ls > >(cat)",
        'echo "$(ls)"',
        "echo ${X:-$(ls)}",
        "$CMD",
        "${CMD} -l",
        "$'\\x6c\\x73\\0'",
        '$"ls"',
        "l* -la",
        "l{s,{x,}} -la",
        "eval ls",
        "cat <<EOF | sh\nls\nEOF",
    ],
)
def test_dynamic_code_floors_at_prompt(policy: Policy, line: str) -> None:
    verdict = decide_command(policy, line)
    assert verdict.dynamic
    assert verdict.decision is P


@pytest.mark.parametrize(
    ("line", "argv"),
    [
        ("$'\\x6c\\x73' -la", ("ls", "-la")),
        ("$'ls'", ("ls",)),
        ("l''s", ("ls",)),
        ('"ls" src', ("ls", "src")),
        ("l{s,} -la", ("ls", "l", "-la")),
        ("ls {a..c}", ("ls", "a", "b", "c")),
        ("ls x{01..02}", ("ls", "x01", "x02")),
    ],
)
def test_static_after_quote_removal_and_braces(
    policy: Policy, line: str, argv: tuple[str, ...]
) -> None:
    verdict = decide_command(policy, line)
    assert verdict.allowed, verdict.explain()
    assert [c.argv for c in verdict.commands] == [argv]
    assert all(c.exact for c in verdict.commands)


def test_variables_as_arguments_are_not_dynamic(policy: Policy) -> None:
    verdict = decide_command(policy, 'echo "$HOME" $USER ${PWD}')
    assert verdict.allowed
    assert not verdict.dynamic


def test_dynamic_head_uses_a_forbidding_default() -> None:
    strict = Policy([PrefixRule("ls", ("ls",), A)], default=F)
    assert decide_command(strict, "$X").decision is F
    assert decide_command(Policy([]), "$X").decision is P


@pytest.mark.parametrize(
    "line",
    [
        "(curl x)",
        "{ curl x; }",
        "if ls; then curl x; fi",
        "if ls; then ls; elif ls; then ls; else curl x; fi",
        "for i in 1 2; do curl x; done",
        "for ((i=0;i<2;i++)); do curl x; done",
        "while curl x; do ls; done",
        "until ls; do curl x; done",
        "case $x in a) ls;; *) curl x;; esac",
        "f() { curl x; }",
        "function f { curl x; }",
        "! curl x",
        "ls | curl x | cat",
        "ls && { ls || (curl x); }",
        "echo $((1 + $(curl x)))",
        "[[ -n $(curl x) ]]",
        "X=$(curl x)",
        "export X=$(curl x)",
        "a=(1 $(curl x))",
        "cat <<EOF\n$(curl x)\nEOF",
        "coproc curl x",
        "time curl x",
        "ls > $(curl x)",
    ],
)
def test_every_construct_counts(policy: Policy, line: str) -> None:
    assert decide_command(policy, line).decision is F


def test_unquoted_heredoc_body_substitutions_are_judged(policy: Policy) -> None:
    # The grammar leaves backticks in a heredoc body as text; bash runs them.
    verdict = decide_command(policy, 'cat <<EOF\nlog: `curl x` "$(ls)"\nEOF')
    assert verdict.decision is F
    assert verdict.dynamic
    assert ("curl", "x") in [c.argv for c in verdict.commands]
    verdict = decide_command(policy, 'cat <<EOF\nit\'s \\`curl x\\` \\\\ "q"\nEOF')
    assert verdict.dynamic  # conservative: an escaped backtick still counts as a substitution
    assert decide_command(policy, "cat <<EOF\nplain $HOME text\nEOF").allowed


def test_backtick_bodies_are_read_as_bash_reads_them(policy: Policy) -> None:
    verdict = decide_command(policy, "echo `\\\\rm -rf /`")  # bash un-escapes \\ → \
    assert verdict.decision is F
    assert decide_command(policy, "echo ${X:-`curl x`}").decision is F
    assert decide_command(policy, 'echo "`curl x`"').decision is F
    nested = decide_command(policy, "echo `echo \\`curl x\\``")
    assert nested.decision is F


def test_quoted_heredoc_body_is_data(policy: Policy) -> None:
    verdict = decide_command(policy, "cat <<'EOF'\n$(curl x) it's fine\nEOF")
    assert verdict.allowed


def test_steering_assignments(policy: Policy) -> None:
    for line in (
        "PATH=/tmp git status",
        "LD_PRELOAD=/tmp/x.so ls",
        "export PATH=/tmp; ls",
        "PATH=/tmp; ls",
        "declare -x PYTHONPATH=/tmp; pytest",
        "for PATH in /tmp; do ls; done",
        "env PATH=/tmp ls",
        "sudo PATH=/tmp ls",
    ):
        assert SignalKind.STEERING in kinds(policy, line), line
        assert decide_command(policy, line).decision is P
    assert decide_command(policy, "CI=1 FOO=bar pytest -q").allowed


def test_command_valued_steering_variables_are_judged(policy: Policy) -> None:
    assert decide_command(policy, "GIT_SSH_COMMAND='rm -rf /' git status").decision is F
    assert decide_command(policy, "env PAGER='curl x' git log").decision is F
    assert decide_command(policy, "export EDITOR='ls'").decision is P
    verdict = decide_command(policy, "EDITOR=$X git status")
    assert verdict.dynamic
    assert verdict.decision is P


def test_line_continuation_glued_word_is_not_split(policy: Policy) -> None:
    strict = Policy([PrefixRule("git", ("git",), A), PrefixRule("git-push", ("git", "push"), F)])
    verdict = decide_command(strict, "git pu\\\nsh")
    assert verdict.decision is P
    assert verdict.commands[0].argv == ("git", "pu\\\nsh")
    assert decide_command(strict, "git \\\n push").decision is F
    assert decide_command(policy, "l\\\ns").decision is P


def test_explain_names_commands_rules_and_signals(policy: Policy) -> None:
    text = decide_command(policy, "sudo git status > /etc/x; echo $(rm -rf /)").explain()
    assert text.startswith("forbidden: ")
    assert "git status (via sudo) → allow by rule 'git-status'" in text
    assert "rm -rf / → forbidden by rule 'rm-rf': recursive forced delete" in text
    assert "write: > /etc/x" in text
    assert "dynamic: command substitution $(rm -rf /)" in text
    assert "privilege: sudo runs as another user" in text
    assert "make → prompt by the default" in decide_command(policy, "make").explain()


def test_to_invoke(policy: Policy) -> None:
    assert decide_command(policy, "ls").to_invoke() == invoke.Verdict.allow(stage="cmdpolicy")
    prompt = decide_command(policy, "make").to_invoke(stage="cmd")
    assert prompt.decision is invoke.Decision.PROMPT
    assert prompt.kind is toolfail.Kind.NEEDS_APPROVAL
    assert prompt.stage == "cmd"
    deny = decide_command(policy, "curl x").to_invoke()
    assert deny.decision is invoke.Decision.DENY
    assert deny.kind is toolfail.Kind.FORBIDDEN
    assert "curl" in deny.reason


@pytest.mark.parametrize(
    ("line", "error"),
    [
        ('echo "open', UnclosedQuoteError),
        ("echo 'open", UnclosedQuoteError),
        ("echo `ls", UnclosedQuoteError),
        ("if true; then ls", ShellSyntaxError),
        ("ls &&", ShellSyntaxError),
        ("echo $(", ShellSyntaxError),
        ("ls )", ShellSyntaxError),
        ("cat <>f", ShellSyntaxError),
        ("{ls,-la}", ShellSyntaxError),
        ("echo \x00", UnjudgeableError),
        ("echo \udcff", UnjudgeableError),
    ],
)
def test_unjudgeable_lines(policy: Policy, line: str, error: type[Exception]) -> None:
    with pytest.raises(error):
        decide_command(policy, line)


def test_line_length_cap(policy: Policy, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(decide, "MAX_LINE_BYTES", 20)
    assert decide_command(policy, "ls " + "a" * 17).allowed
    with pytest.raises(TooLargeError, match="21 bytes"):
        decide_command(policy, "ls " + "a" * 18)
    with pytest.raises(TooLargeError):
        decide_command(policy, "ls " + "é" * 9)  # bytes, not characters


def test_ast_node_cap_counts_inner_scripts(policy: Policy, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(decide, "MAX_AST_NODES", 30)
    assert decide_command(policy, "ls; ls").allowed
    with pytest.raises(TooLargeError, match="nodes"):
        decide_command(policy, "; ".join(["ls"] * 20))
    with pytest.raises(TooLargeError):
        decide_command(policy, "sh -c 'ls; ls; ls; ls' ; sh -c 'ls; ls; ls; ls'")


def test_nesting_cap(policy: Policy, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(decide, "MAX_NESTING", 2)
    assert decide_command(policy, "sh -c 'sh -c ls'").allowed
    with pytest.raises(TooLargeError, match="nest"):
        decide_command(policy, "sh -c \"sh -c 'sh -c ls'\"")
    with pytest.raises(TooLargeError):
        decide_command(policy, "nohup nohup nohup ls")


def test_default_caps_take_a_large_benign_line(policy: Policy) -> None:
    line = " && ".join(["ls -la src"] * 500)
    assert len(line.encode()) < decide.MAX_LINE_BYTES
    assert decide_command(policy, line).allowed


GIT = Policy([PrefixRule("git", ("git",), A), PrefixRule("git-push", ("git", "push"), F)])


@pytest.mark.parametrize(
    "line",
    [
        "git >/dev/null push",
        "git 2>/dev/null push origin",
        "ls | git 2>/dev/null push",
        "git status && git 2>&1 >/dev/null push",
        "git <<E push\nbody\nE",
        "X=1 >/dev/null git push",
    ],
)
def test_words_after_redirections_belong_to_the_command(line: str) -> None:
    verdict = decide_command(GIT, line)
    assert verdict.decision is F
    assert any(c.argv[:2] == ("git", "push") for c in verdict.commands)


def test_words_after_a_compound_redirection_are_refused() -> None:
    for line in ("{ ls; } > f x", "(ls) 2>/dev/null push", "if ls; then ls; fi > f x"):
        with pytest.raises(ShellSyntaxError, match="compound"):
            decide_command(GIT, line)


def test_fd_number_after_a_continuation_is_not_an_argument(policy: Policy) -> None:
    verdict = decide_command(policy, "pytest -q \\\n  2>&1")
    assert verdict.commands[0].argv == ("pytest", "-q")
    assert verdict.allowed
    assert decide_command(policy, "echo 2 >f").wrote
    assert decide_command(policy, "echo 2 x").commands[0].argv == ("echo", "2", "x")


@pytest.mark.parametrize(
    "line",
    [
        "ls\n\\curl x",
        "ls\n\\\ncurl x",
        "ls # c \\\n\\\ncurl x",
        "ls >/dev/null\n\\\ncurl x",
        "! { curl x \\\n|& ls; }",
    ],
)
def test_grammar_misreadings_are_refused(policy: Policy, line: str) -> None:
    with pytest.raises(ShellSyntaxError, match="grammar"):
        decide_command(policy, line)


def test_heredoc_must_end_on_its_own_line(policy: Policy) -> None:
    with pytest.raises(ShellSyntaxError, match="heredoc end"):
        decide_command(policy, "cat <<ls\nls&&cat <<'F'\n$(curl x)\nF\nls")
    with pytest.raises(ShellSyntaxError, match="heredoc end"):
        decide_command(policy, "cat <<E\nx\n E")  # a leading blank is not allowed without <<-
    assert decide_command(policy, "cat <<-E\n\tx\n\tE\nls").allowed
    assert decide_command(policy, 'cat <<"E"\nfoo\n"E"\nE').allowed
    assert decide_command(policy, "cat <<\\E\n$(curl x)\nE").allowed


def test_bare_carriage_return_is_opaque(policy: Policy) -> None:
    for line in ("ls\r", "ls \r -la", "git status\r\n", "ls &&\r ls"):
        verdict = decide_command(policy, line)
        assert verdict.decision is P, line
        assert SignalKind.OPAQUE in {s.kind for s in verdict.signals}
    for line in ("echo 'a\rb'", 'echo "a\rb"', "echo $'\\r'", "ls # \r", "cat <<'E'\n\r\nE"):
        assert decide_command(policy, line).allowed, line
    assert decide_command(policy, 'echo "$(ls\r)"').decision is P


def test_redirection_without_a_command(policy: Policy) -> None:
    for line in ("> out.txt", ">/dev/null"):
        verdict = decide_command(policy, line)
        assert verdict.commands == ()
        assert verdict.decision is P
    assert decide_command(policy, "> out.txt").wrote
    # Valid bash the grammar rejects: refused, the safe direction (a known limit).
    with pytest.raises(ShellSyntaxError):
        decide_command(policy, "X=1 > out.txt")


def test_exact_flag_tells_static_argvs(policy: Policy) -> None:
    verdict = decide_command(policy, "ls -la; echo $HOME")
    assert [c.exact for c in verdict.commands] == [True, False]
