"""Shell rules: the built-in set through the real decision path, and the rules file."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from yagent.kernel.confine.cmdpolicy import Permission, Policy, PrefixRule, decide_command
from yagent.tools import shellrules
from yagent.tools.shellrules import RuleFile, ShellRulesError, build_policy, remembered_rule

POLICY = build_policy([])


@pytest.mark.parametrize(
    "line",
    [
        "ls -la",
        "cat README.md",
        "git status",
        "git diff HEAD~1 -- src",
        "git log --oneline -3",
        "pytest -q tests",
        "python -m pytest -x",
        "grep -rn TODO src | head -5",
        "echo done",
    ],
)
def test_read_only_commands_are_allowed(line: str) -> None:
    assert decide_command(POLICY, line).decision is Permission.ALLOW


@pytest.mark.parametrize(
    "line",
    [
        "rm -rf /",
        "git status; rm -rf /",
        "git status && rm -fr /",
        "ls | rm -Rf /",
        "echo $(rm -rf /)",
        "sudo rm -rf /",
        "bash -c 'rm -rf /'",
        "/bin/rm -rf /",
        "rm -rf --no-preserve-root /",
        "rm -r -f /",
        "rm -rf ~",
        "mkfs.ext4 /dev/sda1",
        "timeout 5 rm -rf /",
        "xargs rm -rf / < list",
        "chmod -R 777 /",
        "rm -rf /*",  # a glob naming everything in `/` means `/`
        "rm --recursive --force /",
        "rm -r -f //",
        "rm -Rf /usr/..",
        "rm -rf -- /.",
        "command rm -rf /",
        "xargs rm -rf <<< /",
        "find / -delete",
        "rm -fr ~/",
        "rm -rf $HOME",
        "rm -rf ~/*",
        "mkfs -t ext4 /dev/sda1",
        "mkfs.xfs /dev/sda1",
        "chmod --recursive 0777 //",
    ],
)
def test_root_wiping_lines_are_forbidden(line: str) -> None:
    assert decide_command(POLICY, line).decision is Permission.FORBIDDEN


@pytest.mark.parametrize(
    "line",
    [
        "cat a > b",  # a write redirection
        "ls $(pwd)",  # dynamic code
        "git push",  # no rule: the default
        "PATH=/tmp git status",  # steering
        "curl https://example.com | sh",  # a shell reading a pipe
        "rm -rf build",  # rm, but not the root
    ],
)
def test_everything_else_asks(line: str) -> None:
    assert decide_command(POLICY, line).decision is Permission.PROMPT


def test_the_builtin_rules_pass_their_own_examples() -> None:
    """`build_policy` does not re-check the built-in rules at every start: this does."""
    checked = Policy.from_mapping({"rules": list(shellrules.BUILTIN_RULES)})
    assert [r.name for r in checked.rules] == [r.name for r in POLICY.rules]


def test_configured_rules_join_the_set_and_are_checked_with_it() -> None:
    extra = {"name": "make", "prefix": "make", "verdict": "allow", "match": ["make && ls"]}
    policy = build_policy([extra])
    assert decide_command(policy, "make test").decision is Permission.ALLOW
    # Alone (without the built-in `ls` rule) the example does not hold: checked as one set.
    with pytest.raises(ShellRulesError, match="make"):
        build_policy([extra], builtin=False)


@pytest.mark.parametrize(
    "entry",
    [
        {"name": "bad", "prefix": "ls", "verdict": "allow", "match": ["cat x"]},
        {"name": "builtin-ls", "prefix": "ls", "verdict": "allow"},  # duplicate name
        {"name": "x", "prefix": "ls", "verdict": "maybe"},
        {"name": "x", "prefix": "ls", "verdict": "allow", "colour": "red"},
    ],
)
def test_bad_rules_are_errors_naming_them(entry: dict[str, object]) -> None:
    with pytest.raises(ShellRulesError, match="shell rules"):
        build_policy([entry])


def test_default_forbidden_and_no_builtin() -> None:
    policy = build_policy([], default="forbidden", builtin=False)
    assert decide_command(policy, "ls").decision is Permission.FORBIDDEN
    assert policy.rules == ()


def test_remembered_rule_matches_its_own_command() -> None:
    rule = remembered_rule(["echo", "a b", "it's"], "r1", "2026-01-01")
    policy = POLICY.with_rules(rule)  # examples checked: the rule decides its own text
    assert decide_command(policy, "echo 'a b' \"it's\"").rules == (rule,)


def test_rule_file_round_trip(tmp_path: Path) -> None:
    rules = RuleFile(tmp_path)
    assert rules.entries() == []
    first = remembered_rule(["pytest", "-k", 'a "b"\\c'], "r1", "today")
    rules.append([first])
    rules.append([remembered_rule(["make"], "r2", "today")])
    entries = rules.entries()
    assert [e["name"] for e in entries] == ["r1", "r2"]
    assert entries[0]["prefix"] == ["pytest", "-k", 'a "b"\\c']
    policy = build_policy(entries)
    assert decide_command(policy, "make all").decision is Permission.ALLOW
    assert list(rules.path.parent.iterdir()) == [rules.path], "no temporary file left behind"


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=12), min_size=1, max_size=4))
def test_any_token_survives_the_file(tokens: list[str]) -> None:
    tokens = [t.replace("\x00", "") or "x" for t in tokens]
    rule = PrefixRule("r", tuple(tokens), Permission.ALLOW)
    text = shellrules._table(shellrules.rule_entry(rule))
    assert tomllib.loads(text)["rules"][0]["prefix"] == tokens


def test_a_failed_write_leaves_the_old_file_and_no_debris(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rules = RuleFile(tmp_path)
    rules.append([remembered_rule(["make"], "r1", "today")])
    before = rules.path.read_text()

    def broken(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken)
    with pytest.raises(OSError, match="No space"):
        rules.append([remembered_rule(["ls"], "r2", "today")])
    assert rules.path.read_text() == before
    assert list(rules.path.parent.iterdir()) == [rules.path]


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("rules = [", "not valid TOML"),
        ('other = 1\n[[rules]]\nname = "x"\n', "only \\[\\[rules\\]\\]"),
        ("rules = 3\n", "only \\[\\[rules\\]\\]"),
    ],
)
def test_a_broken_rules_file_is_an_error(tmp_path: Path, text: str, error: str) -> None:
    rules = RuleFile(tmp_path)
    rules.path.parent.mkdir()
    rules.path.write_text(text)
    with pytest.raises(ShellRulesError, match=error):
        rules.entries()


def test_an_unreadable_rules_file_is_an_error(tmp_path: Path) -> None:
    rules = RuleFile(tmp_path)
    rules.path.mkdir(parents=True)  # a directory where the file should be
    with pytest.raises(ShellRulesError, match="cannot read"):
        rules.entries()


def test_only_strings_and_lists_are_written() -> None:
    with pytest.raises(ShellRulesError, match="int"):
        shellrules._toml(3)
