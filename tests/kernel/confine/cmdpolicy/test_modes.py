"""chmod modes by what they do: every spelling of the same change is one mode (`modes`), and a
rule naming a mode stops every spelling of that change and every mode that does more."""

from __future__ import annotations

import pytest

from yagent.kernel.confine.cmdpolicy import Permission, Policy, PrefixRule, decide_command
from yagent.kernel.confine.cmdpolicy.modes import covers, effect

F = Permission.FORBIDDEN
POLICY = Policy(
    [
        PrefixRule("all-bits", ("chmod", "-R", "777", "/srv"), F),
        PrefixRule("world-write", ("chmod", "-R", "o+w", "/data"), F),
        PrefixRule("no-setuid", ("chmod", "u+s", "/usr/bin/x"), F),
    ]
)


@pytest.mark.parametrize(
    ("mode", "sets", "clears"),
    [
        ("777", 0o777, 0),
        ("0777", 0o777, 0),
        ("644", 0o644, 0o133),
        ("a+rwx", 0o777, 0),
        ("a=rwx", 0o777, 0),
        ("u=rwx,go=rwx", 0o777, 0),
        ("ugo+rwx", 0o777, 0),
        ("+w", 0o222, 0),  # no `who`: read as `a` (the umask is not known here)
        ("o+w", 0o002, 0),
        ("go-w", 0, 0o022),
        ("u=rw", 0o600, 0o100),
        ("a+X", 0, 0),  # conditional: nothing sure
        ("g=u", 0, 0),  # copied: nothing sure
        ("u+s", 0o4000, 0),
        ("+t", 0o1000, 0),
        ("a+rwx,o-w", 0o775, 0o002),
    ],
)
def test_a_mode_is_read_into_the_bits_it_surely_sets_and_clears(
    mode: str, sets: int, clears: int
) -> None:
    assert effect(mode) == (sets, clears)


@pytest.mark.parametrize("mode", ["rwx", "a+q", "u+rw,", "8", "17777", "", "uw+r"])
def test_a_text_that_is_not_a_mode_is_none(mode: str) -> None:
    assert effect(mode) is None


def test_covers_is_at_least_what_the_rule_does() -> None:
    assert covers("a+rwx", "777")
    assert covers("777", "o+w")
    assert covers("o=rwx", "o+w")
    assert not covers("o+w", "777")
    assert not covers("755", "o+w")
    assert not covers("a+X", "o+x")
    assert covers("nonsense", "nonsense")
    assert not covers("nonsense", "777")


@pytest.mark.parametrize(
    ("line", "rule"),
    [
        ("chmod -R a+rwx /srv", "all-bits"),
        ("chmod -R u=rwx,go=rwx /srv", "all-bits"),
        ("chmod -R ugo=rwx /srv/", "all-bits"),
        ("chmod -R 0777 //srv", "all-bits"),
        ("chmod -R +rwx /srv", "all-bits"),
        ("chmod --recursive a=rwx,g-x,g+x /srv", "all-bits"),
        ("chmod -R o+w /data", "world-write"),
        ("chmod -R a+w /data", "world-write"),
        ("chmod -R 777 /data", "world-write"),
        ("chmod -R 0666 /data", "world-write"),
        ("chmod -R o=rwx /data", "world-write"),
        ("chmod -R +w /data", "world-write"),
        ("chmod u=rwxs /usr/bin/x", "no-setuid"),
        ("chmod 4755 /usr/bin/x", "no-setuid"),
    ],
)
def test_every_spelling_of_a_forbidden_mode_change_is_forbidden(line: str, rule: str) -> None:
    verdict = decide_command(POLICY, line)
    assert verdict.decision is F, verdict.explain()
    assert [r.name for r in verdict.rules] == [rule]


@pytest.mark.parametrize(
    "line",
    [
        "chmod -R 755 /srv",
        "chmod -R o+w /srv",
        "chmod -R go-w /data",
        "chmod -R 775 /data",
        "chmod -R a+X /data",
        "chmod 755 /usr/bin/x",
        "chmod -R 777 /srv2",
    ],
)
def test_a_mode_change_that_does_less_is_not_forbidden(line: str) -> None:
    assert decide_command(POLICY, line).decision is not F
