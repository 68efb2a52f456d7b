"""Exec-style wrappers are judged on what they run; their option tables are exercised."""

from __future__ import annotations

import pytest

from yagent.kernel.confine.cmdpolicy import (
    Permission,
    Policy,
    PrefixRule,
    SignalKind,
    decide_command,
)
from yagent.kernel.confine.cmdpolicy.git import normalise_git
from yagent.kernel.confine.cmdpolicy.model import Arg, Stdin
from yagent.kernel.confine.cmdpolicy.wrappers import _SIMPLE, parse_options, unwrap

A, P, F = Permission.ALLOW, Permission.PROMPT, Permission.FORBIDDEN


def words(*values: str) -> tuple[Arg, ...]:
    return tuple(Arg.of(v) for v in values)


def kinds(policy: Policy, line: str) -> set[SignalKind]:
    verdict = decide_command(policy, line)
    return {s.kind for s in verdict.signals} | {s.kind for c in verdict.commands for s in c.signals}


def inner(policy: Policy, line: str) -> list[tuple[str, ...]]:
    return [c.argv for c in decide_command(policy, line).commands]


@pytest.mark.parametrize(
    ("line", "runs"),
    [
        ("env ls", ("ls",)),
        ("env -i -u HOME -C /tmp FOO=1 -- ls -l", ("ls", "-l")),
        ("env --unset=HOME --chdir /tmp ls", ("ls",)),
        ("timeout 5 ls", ("ls",)),
        ("timeout -s KILL -k 1 --preserve-status 5s ls", ("ls",)),
        ("timeout --signal=TERM 5 ls", ("ls",)),
        ("nice ls", ("ls",)),
        ("nice -n 5 ls", ("ls",)),
        ("nice -10 ls", ("ls",)),
        ("nice --adjustment=3 ls", ("ls",)),
        ("nohup ls", ("ls",)),
        ("stdbuf -oL -e 0 ls", ("ls",)),
        ("time -p ls", ("ls",)),
        ("command ls", ("ls",)),
        ("command -p ls", ("ls",)),
        ("exec -a name ls", ("ls",)),
        ("builtin echo hi", ("echo", "hi")),
        ("setsid -f ls", ("ls",)),
        ("ionice -c 3 ls", ("ls",)),
        ("taskset 0x1 ls", ("ls",)),
        ("flock /tmp/lock ls", ("ls",)),
        ("unbuffer ls", ("ls",)),
        ("busybox ls -l", ("ls", "-l")),
        ("toybox cat f", ("cat", "f")),
        ("/usr/bin/env ls", ("ls",)),
        ("watch -x -n 1 ls", ("ls",)),
        ("xargs", ("echo",)),
        ("xargs -0 -n1 -P 4 grep x", ("grep", "x")),
        ("xargs --max-args=1 --null cat", ("cat",)),
        ("xargs -r -e cat", ("cat",)),
    ],
)
def test_wrapper_runs_the_inner_command(policy: Policy, line: str, runs: tuple[str, ...]) -> None:
    verdict = decide_command(policy, line)
    assert verdict.commands[-1].argv == runs
    assert verdict.commands[-1].via, "the inner command records its wrapper"
    assert len(verdict.commands) == 1, "a transparent wrapper is not judged itself"


def test_transparent_wrapper_alone_is_judged_itself(policy: Policy) -> None:
    for line in ("env", "nohup", "time", "nice"):
        verdict = decide_command(policy, line)
        assert verdict.commands[0].argv == (line,)
        assert verdict.decision is P


def test_rule_written_for_a_wrapper_applies() -> None:
    policy = Policy(
        [PrefixRule("sudo", ("sudo",), F, match=("sudo ls",)), PrefixRule("ls", ("ls",), A)]
    )
    assert decide_command(policy, "sudo ls").decision is F
    relaxed = Policy([PrefixRule("timeout", ("timeout",), A), PrefixRule("ls", ("ls",), A)])
    verdict = decide_command(relaxed, "timeout 5 ls")
    assert verdict.allowed
    assert [r.name for r in verdict.rules] == ["ls", "timeout"]


def test_unknown_option_is_opaque(policy: Policy) -> None:
    for line in ("timeout --frobnicate 5 ls", "nice -Z ls", "env -q ls"):
        assert SignalKind.OPAQUE in kinds(policy, line), line
        assert decide_command(policy, line).decision is P


def test_option_parser_details() -> None:
    parsed = parse_options("xargs", _SIMPLE["xargs"], words("-n1", "-I", "{}", "--", "-x"))
    assert parsed.seen["n"] == Arg.of("1")
    assert parsed.seen["I"] == Arg.of("{}")
    assert parsed.rest == words("-x")
    parsed = parse_options("env", _SIMPLE["env"], (Arg.of("A=1"), Arg(None, "$X"), Arg.of("y")))
    assert parsed.assigned == [("A", Arg("1", "A=1"))]
    assert parsed.rest == (Arg(None, "$X"), Arg.of("y"))
    parsed = parse_options("timeout", _SIMPLE["timeout"], words("-s"))
    assert parsed.seen["s"] is None
    assert parsed.rest == ()


def test_env_assignment_is_any_word_with_an_equals_sign(policy: Policy) -> None:
    parsed = parse_options("env", _SIMPLE["env"], words("1A=2", "é=x", "ls"))
    assert [name for name, _ in parsed.assigned] == ["1A", "é"]
    assert parsed.rest == words("ls")
    parsed = parse_options("env", _SIMPLE["env"], words("=x", "ls"))
    assert parsed.rest == words("=x", "ls")
    assert decide_command(policy, "env 1A=2 rm -rf /").decision is F


def test_env_split_string(policy: Policy) -> None:
    assert decide_command(policy, "env -S 'rm -rf /'").decision is F
    assert decide_command(policy, "env --split-string='ls -l' src").allowed
    assert decide_command(policy, 'env -S "$X"').dynamic


def test_privilege_wrappers(policy: Policy) -> None:
    for line in ("sudo ls", "sudo -u root -- ls", "doas -u root ls", "su -c ls", "su root"):
        assert SignalKind.PRIVILEGE in kinds(policy, line), line
        assert decide_command(policy, line).decision is P
    assert decide_command(policy, "sudo -u root rm -rf /").decision is F
    assert decide_command(policy, "su - root -c 'curl x'").decision is F
    assert decide_command(policy, "su root --command 'curl x'").decision is F
    assert ("sudo", "-l") in inner(policy, "sudo -l")
    assert SignalKind.WRITE in kinds(policy, "sudo -e /etc/hosts")
    assert SignalKind.WRITE in kinds(policy, "sudo --edit /etc/hosts")


def test_time_output_option_writes(policy: Policy) -> None:
    assert SignalKind.WRITE in kinds(policy, "time -o report.txt ls")
    assert decide_command(policy, "stdbuf --output=L ls").allowed


def test_command_lookup_does_not_run(policy: Policy) -> None:
    verdict = decide_command(policy, "command -v rm")
    assert verdict.commands[0].argv == ("command", "-v", "rm")
    assert verdict.decision is P


@pytest.mark.parametrize("shell", ["sh", "bash", "zsh", "dash", "/bin/bash", "busybox sh"])
def test_shell_c_script_is_parsed(policy: Policy, shell: str) -> None:
    assert decide_command(policy, f"{shell} -c 'ls -la && git status'").allowed
    assert decide_command(policy, f"{shell} -c 'ls; curl x'").decision is F


def test_shell_option_forms(policy: Policy) -> None:
    assert decide_command(policy, "bash -ec 'ls'").allowed
    assert decide_command(policy, "bash -o pipefail -c 'ls' name arg").allowed
    assert decide_command(policy, "bash --norc --rcfile x -c ls").allowed
    assert decide_command(policy, "bash +o errexit -c ls").allowed
    assert decide_command(policy, "bash -c").decision is P  # no script: judged itself
    assert decide_command(policy, 'bash -c "$CODE"').dynamic


def test_shell_running_a_file_is_judged_as_itself(policy: Policy) -> None:
    verdict = decide_command(policy, "bash ./build.sh arg")
    assert verdict.commands[0].argv == ("bash", "./build.sh", "arg")
    assert verdict.decision is P
    assert not verdict.dynamic
    ok = Policy([PrefixRule("build", ("bash", "./build.sh"), A)])
    assert decide_command(ok, "bash ./build.sh x").allowed


def test_shell_reading_unseen_code_is_dynamic(policy: Policy) -> None:
    for line in ("cat script | sh", "sh < script", "bash", "bash -s arg", "xargs sh"):
        assert decide_command(policy, line).dynamic, line


def test_shell_stdin_heredoc_and_herestring(policy: Policy) -> None:
    assert decide_command(policy, "bash <<'EOF'\nls\ngit status\nEOF").allowed
    assert decide_command(policy, "sh <<EOF\nls\nEOF").allowed
    assert decide_command(policy, "bash <<< 'rm -rf /'").decision is F
    assert decide_command(policy, "bash -s <<< ls").allowed
    verdict = decide_command(policy, "bash <<EOF\n$X\nEOF")
    assert verdict.dynamic
    assert verdict.decision is P
    assert decide_command(policy, 'bash <<< "$X"').dynamic
    assert decide_command(policy, "sudo bash <<EOF\nrm -rf /\nEOF").decision is F


def test_shell_stdin_in_unwrap_directly() -> None:
    got = unwrap("bash", words("bash"), False, Stdin(("ls",)))
    assert got is not None
    assert got.runs[0].script == Arg.of("ls")
    got = unwrap("bash", words("bash"), True, Stdin(("ls",)))
    assert got is not None
    assert not got.runs
    assert not got.transparent
    assert unwrap("ls", words("ls"), False, Stdin()) is None


def test_eval_and_alias(policy: Policy) -> None:
    assert decide_command(policy, "eval 'rm -rf /'").decision is F
    assert decide_command(policy, "eval rm -rf /").decision is F
    verdict = decide_command(policy, "eval ls")
    assert verdict.dynamic
    assert verdict.decision is P
    assert decide_command(policy, 'eval "$X"').dynamic
    assert decide_command(policy, "alias ll='rm -rf /'").decision is F
    assert decide_command(policy, "alias ll='ls -l'").decision is P
    assert decide_command(policy, "alias ll=$X").dynamic
    assert decide_command(policy, "alias").decision is P


def test_trap_action_is_judged(policy: Policy) -> None:
    assert decide_command(policy, "trap 'curl x' EXIT; ls").decision is F
    assert decide_command(policy, "trap -- 'rm -rf /' INT TERM").decision is F
    verdict = decide_command(policy, "trap 'ls' EXIT")
    assert verdict.decision is P  # trap itself is judged by the rules: no rule, the default
    assert [c.argv[0] for c in verdict.commands] == ["trap", "ls"]
    assert [c.argv for c in decide_command(policy, "trap -l").commands] == [("trap", "-l")]
    assert len(decide_command(policy, "trap -p EXIT").commands) == 1
    assert decide_command(policy, 'trap "$X" EXIT').dynamic


def test_find_exec(policy: Policy) -> None:
    assert decide_command(policy, "find . -name '*.py' -exec rm -rf {} \\;").decision is F
    assert decide_command(policy, "find . -execdir curl x {} +").decision is F
    assert decide_command(policy, "find . -ok rm -rf {} ';'").decision is F
    runs = inner(policy, "find . -exec grep -l x {} + -exec wc -l {} \\;")
    assert ("grep", "-l", "x", "{}") in runs
    assert ("wc", "-l", "{}") in runs
    verdict = decide_command(policy, "find . -exec {} \\;")
    assert verdict.dynamic
    assert verdict.decision is P
    verdict = decide_command(policy, "find . -exec sh -c 'rm -rf \"$1\"' _ {} \\;")
    assert verdict.decision is F
    verdict = decide_command(policy, "find . -exec \\;")  # nothing to run: find alone counts
    assert [c.argv for c in verdict.commands] == [("find", ".", "-exec", ";")]
    assert verdict.allowed
    assert decide_command(Policy([]), "find . -exec ls \\;").decision is P


def test_find_writes(policy: Policy) -> None:
    for line in ("find . -delete", "find . -fprint out", "find . -fls out"):
        verdict = decide_command(policy, line)
        assert verdict.wrote, line


def test_xargs_appends_run_time_arguments() -> None:
    policy = Policy([PrefixRule("rm", ("rm",), A), PrefixRule("rm-rf", ("rm", "-rf"), F)])
    verdict = decide_command(policy, "xargs rm")
    assert verdict.decision is P
    assert SignalKind.UNCHECKABLE in {s.kind for c in verdict.commands for s in c.signals}
    assert decide_command(policy, "xargs rm -rf").decision is F


def test_xargs_replace_string_is_run_time(policy: Policy) -> None:
    verdict = decide_command(policy, "xargs -I{} cat {}")
    assert verdict.commands[0].argv == ("cat", "{}")
    assert verdict.allowed
    assert decide_command(policy, "xargs -I % sh -c 'rm %'").dynamic
    assert decide_command(policy, "xargs -i {} -- ls").decision is P  # `{}` is the command
    assert decide_command(policy, "xargs --replace=@ echo @").allowed
    verdict = decide_command(policy, "xargs -iX ls X")
    assert verdict.allowed


def test_watch_and_parallel(policy: Policy) -> None:
    assert decide_command(policy, "watch -n 1 'ls; curl x'").decision is F
    assert decide_command(policy, "watch ls -l").allowed
    assert decide_command(policy, "watch").decision is P
    verdict = decide_command(policy, "parallel -j 4 rm -rf {} ::: a b")
    assert verdict.decision is F
    verdict = decide_command(policy, "parallel echo ::: a b")
    assert verdict.dynamic
    assert verdict.decision is P
    assert decide_command(policy, "parallel < cmds.txt").dynamic


def test_flock_command(policy: Policy) -> None:
    assert decide_command(policy, "flock -c 'curl x' /tmp/l").decision is F
    assert decide_command(policy, "flock /tmp/l -c 'curl x'").decision is F
    assert decide_command(policy, "flock /tmp/l --command='curl x'").decision is F
    assert decide_command(policy, "flock /tmp/l -c").decision is P
    assert decide_command(policy, "flock /tmp/l -c 'ls'").allowed
    assert decide_command(policy, "flock -w 5 /tmp/l ls").allowed


def test_git_global_options_are_stripped(policy: Policy) -> None:
    for line in (
        "git -C src status",
        "git --no-pager log",
        "git --git-dir=.git --work-tree . status",
        "git -P -p diff",
        "/usr/bin/git status",
    ):
        verdict = decide_command(policy, line)
        assert verdict.commands[0].argv[1:2] in (("status",), ("log",), ("diff",)), line
    assert decide_command(policy, "git -C src status").allowed


def test_git_config_overrides(policy: Policy) -> None:
    verdict = decide_command(policy, "git -c color.ui=always status")
    assert verdict.decision is P
    assert SignalKind.CONFIG in {s.kind for c in verdict.commands for s in c.signals}
    assert decide_command(policy, "git -c core.pager='rm -rf /' log").decision is F
    assert decide_command(policy, "git -c alias.st='!curl x' st").decision is F
    assert decide_command(policy, "git -ccore.editor=curl status").decision is F
    assert decide_command(policy, "git -c core.sshCommand=$X fetch").dynamic
    assert decide_command(policy, "git --config-env=core.pager=EVIL log").decision is P
    separate = decide_command(policy, "git --config-env core.pager=EVIL log")
    assert separate.decision is P
    assert separate.commands[0].argv == ("git", "log")
    assert decide_command(policy, "git --exec-path=/tmp status").decision is P
    assert decide_command(policy, "git --exec-path").decision is P
    assert decide_command(policy, "git --weird status").decision is P


def test_normalise_git_directly() -> None:
    args, signals, scripts = normalise_git(words("git", "-c", "core.pager=less", "-C", "x", "log"))
    assert args == words("git", "log")
    assert [s.kind for s in signals] == [SignalKind.CONFIG]
    assert scripts == [Arg.of("less")]
    args, signals, scripts = normalise_git(words("git", "-c"))
    assert args == words("git")
    assert scripts == []
    args, _, _ = normalise_git((Arg.of("git"), Arg(None, "$X"), Arg.of("status")))
    assert args == (Arg.of("git"), Arg(None, "$X"), Arg.of("status"))


def test_nested_wrappers(policy: Policy) -> None:
    line = "sudo env FOO=1 timeout 5 nice -n 2 nohup sh -c 'xargs rm -rf'"
    verdict = decide_command(policy, line)
    assert verdict.decision is F
    rm = verdict.commands[-1]
    assert rm.argv == ("rm", "-rf")
    assert rm.via == ("sudo", "env", "timeout", "nice", "nohup", "sh", "xargs")
