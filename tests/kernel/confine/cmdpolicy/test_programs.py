"""The programs read by meaning beyond rm (`programs`): rsync's destination, mv's sources, an
owner or mode a rule leaves out, and rule paths that are patterns (`/dev/sd*`, `/etc/**`).

Unit level only (nothing here runs a command)."""

from __future__ import annotations

import pytest

from yagent.kernel.confine.cmdpolicy import Permission, Policy, PrefixRule, decide_command

F = Permission.FORBIDDEN
POLICY = Policy(
    [
        PrefixRule("rsync-root", ("rsync", "--delete", "/"), F),
        PrefixRule("rsync-home", ("rsync", "--delete", "~"), F),
        PrefixRule("mv-home", ("mv", "~"), F),
        PrefixRule("chown-root", ("chown", "-R", "/"), F),
        PrefixRule("chmod-root", ("chmod", "-R", "/"), F),
        PrefixRule("dd-sd", ("dd", "of=/dev/sd*"), F),
        PrefixRule("shred-sd", ("shred", "/dev/sd*"), F),
        PrefixRule("truncate-etc", ("truncate", "/etc/**"), F),
        PrefixRule("wipefs-sd", ("wipefs", "/dev/sd*"), F),
        PrefixRule("blkdiscard-sd", ("blkdiscard", "/dev/sd*"), F),
    ]
)


@pytest.mark.parametrize(
    ("line", "rule"),
    [
        ("rsync -a --delete empty/ /", "rsync-root"),
        ("rsync -a --del empty/ //", "rsync-root"),
        ("rsync -av --delete-after --exclude .git empty/ /", "rsync-root"),
        ("rsync --delete-before -r -e ssh empty/ /.", "rsync-root"),
        ("rsync --dele -a empty/ ~/", "rsync-home"),  # an abbreviation
        ("rsync -a --delete empty/ /home/..", "rsync-root"),
        ("rsync -a --delete-excluded empty/ $HOME", "rsync-home"),
        ("mv ~ /tmp/x", "mv-home"),
        ("mv -f $HOME/ /tmp/x", "mv-home"),
        ("mv -t /tmp/x ~", "mv-home"),
        ("mv --target-directory=/tmp/x -- ~/", "mv-home"),
        ("mv ~/.. /tmp/x", "mv-home"),  # moving what holds it moves it
        ("chown -R nobody /", "chown-root"),
        ("chown -R nobody:nogroup //", "chown-root"),
        ("chown --recursive 0 /", "chown-root"),
        ("chown -R --reference=x /", "chown-root"),
        ("chmod -R 000 /", "chmod-root"),
        ("chmod -R u+s /", "chmod-root"),
        ("dd if=/dev/zero of=/dev/sda", "dd-sd"),
        ("dd of=/dev/sdb1 bs=4M if=img", "dd-sd"),
        ("dd of=//dev/./sdc", "dd-sd"),
        ("shred -n 3 -z /dev/sda", "shred-sd"),
        ("shred /dev/sd?", "shred-sd"),
        ("truncate -s 0 /etc/passwd", "truncate-etc"),
        ("truncate --size=0 /etc/ssh/sshd_config", "truncate-etc"),
        ("truncate -s0 /etc/*", "truncate-etc"),
        ("truncate -s 0 /etc/../etc/shadow", "truncate-etc"),
        ("wipefs -a /dev/sda", "wipefs-sd"),
        ("wipefs --all --force /dev/sdb2", "wipefs-sd"),
        ("blkdiscard -f /dev/sda", "blkdiscard-sd"),
    ],
)
def test_every_spelling_is_forbidden(line: str, rule: str) -> None:
    verdict = decide_command(POLICY, line, home="/home/u")
    assert verdict.decision is F, verdict.explain()
    assert rule in {r.name for r in verdict.rules}, verdict.explain()


@pytest.mark.parametrize(
    "line",
    [
        "rsync -a --delete / /backup/",  # / is the source: what is deleted is under /backup
        "rsync -a empty/ /",  # no --delete
        "rsync -a --delete src/ dst/",
        "rsync -a --delete empty/ host:/",  # a remote destination: not this machine
        "mv x ~/",  # into the home
        "mv ~/a.txt ~/b.txt",
        "mv -t ~ x y",
        "chown -R me build",
        "chown me /",  # not recursive
        "chmod 755 /",
        "dd if=/dev/sda of=disk.img",
        "dd of=/dev/null",
        "shred -u secret.txt",
        "truncate -s 0 log.txt",
        "truncate -s 0 /etc",  # the rule names what is below /etc
        "truncate -s 0 /etcetera/x",
        "wipefs /dev/null",
    ],
)
def test_what_they_do_not_name_is_not_forbidden(line: str) -> None:
    verdict = decide_command(POLICY, line, home="/home/u")
    assert verdict.decision is not F, verdict.explain()


@pytest.mark.parametrize(
    ("line", "rule"),
    [
        ("cat /dev/zero > /dev/sda", "dd-sd"),
        ("echo x >> /dev/sdb1", "dd-sd"),
        (": > /etc/passwd", "truncate-etc"),
        ("echo 'root2::0:0::/:/bin/sh' >> /etc/passwd", "truncate-etc"),
        ("printf x >| /etc/hosts", "truncate-etc"),
        ("ls &> /etc/x/y", "truncate-etc"),
        ("true > //etc/../etc/shadow", "truncate-etc"),
        ("sh -c 'cat img > /dev/sda'", "dd-sd"),
    ],
)
def test_a_write_redirection_is_judged_as_writing_its_file(line: str, rule: str) -> None:
    """`> FILE` writes FILE as `dd of=FILE` and `truncate FILE` do: their rules judge it."""
    verdict = decide_command(POLICY, line)
    assert verdict.decision is F, verdict.explain()
    assert rule in {r.name for r in verdict.rules}, verdict.explain()


@pytest.mark.parametrize(
    "line",
    ["echo x > out.txt", "ls > /dev/null", "cat /etc/passwd", "wc -l < /dev/sda", "echo > /tmp/x"],
)
def test_other_redirections_keep_their_verdict(line: str) -> None:
    assert decide_command(POLICY, line).decision is not F
