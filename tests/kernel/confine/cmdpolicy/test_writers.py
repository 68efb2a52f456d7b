"""File writers and partitioners judged on what they write (`meaning`: cp/install/tee as `dd of=`
and `truncate` of their destination; `programs`: mkswap, sfdisk, fdisk, parted, sgdisk and their
listing forms); a cp/tee destination known only at run time is UNCHECKABLE (ADR 0031), a write
redirection to a run-time target is asked, as every write redirection is, and stays answerable by
`-y` (scripts write `>> "$(dirname "$0")/x.log"`; ADR 0028, 8). Unit level only (nothing here runs
a command)."""

from __future__ import annotations

import pytest

from yagent.kernel.confine.cmdpolicy import Permission, Policy, PrefixRule, decide_command

F = Permission.FORBIDDEN
POLICY = Policy(
    [
        PrefixRule("dd-sd", ("dd", "of=/dev/sd*"), F),
        PrefixRule("truncate-etc", ("truncate", "/etc/**"), F),
        PrefixRule("truncate-usr", ("truncate", "/usr/**"), F),
        *(
            PrefixRule(f"{tool}-sd", (tool, "/dev/sd*"), F)
            for tool in ("mkswap", "sfdisk", "fdisk", "parted", "sgdisk")
        ),
    ]
)


@pytest.mark.parametrize(
    ("line", "rule"),
    [
        ("cp x /etc/passwd", "truncate-etc"),
        ("cp -f x /etc//passwd", "truncate-etc"),
        ("cp a b /etc/", "truncate-etc"),  # into the directory: a file in it
        ("cp x /etc", "truncate-etc"),
        ("cp -t /etc x", "truncate-etc"),
        ("cp --target-directory=/etc/ x", "truncate-etc"),
        ("cp -t/etc x", "truncate-etc"),
        ("cp -- x /etc/passwd", "truncate-etc"),
        ("cp -at /etc x", "truncate-etc"),  # -t in a cluster, its value the next word
        ("cp --target /etc x", "truncate-etc"),  # an abbreviation of --target-directory
        ("cp --t=/etc x", "truncate-etc"),
        ("cp -S .bak x /etc/passwd", "truncate-etc"),  # -S's value is not the destination
        ("install -dm 755 x /usr/bin/ls", "truncate-usr"),
        ("install -m755 x /usr/bin/ls", "truncate-usr"),
        ("echo x | tee /etc/passwd", "truncate-etc"),
        ("tee -a /etc/sudoers", "truncate-etc"),
        ("echo x | tee out.txt /etc/sudoers", "truncate-etc"),  # every file of tee's
        ("install x /usr/bin/ls", "truncate-usr"),
        ("install -m 755 -o root x /usr/bin/ls", "truncate-usr"),
        ("cp /dev/zero /dev/sda", "dd-sd"),
        ("tee /dev/sdb1 < /dev/zero", "dd-sd"),
        ("mkswap /dev/sda1", "mkswap-sd"),
        ("mkswap -L swap -f /dev/sda2", "mkswap-sd"),
        ("sfdisk /dev/sda < layout", "sfdisk-sd"),
        ("sfdisk --wipe always /dev/sda", "sfdisk-sd"),
        ("fdisk /dev/sda", "fdisk-sd"),
        ("fdisk -b 4096 /dev/sda", "fdisk-sd"),
        ("parted -s /dev/sda mklabel gpt", "parted-sd"),
        ("parted /dev/sda rm 1", "parted-sd"),
        ("parted -a optimal /dev/sda mkpart p 0% 100%", "parted-sd"),
        ("sgdisk -Z /dev/sda", "sgdisk-sd"),
        ("sgdisk --zap-all /dev/sda", "sgdisk-sd"),
    ],
)
def test_writes_into_protected_files_and_disks_are_forbidden(line: str, rule: str) -> None:
    verdict = decide_command(POLICY, line)
    assert verdict.decision is F, verdict.explain()
    assert rule in {r.name for r in verdict.rules}, verdict.explain()


@pytest.mark.parametrize(
    "line",
    [
        "cp x y",
        "cp /etc/passwd copy",  # reading a system file is not writing it
        "cp /dev/sda disk.img",  # nor reading a disk
        "cp -r src/ dst/",
        "cp --sparse always x y",  # a value, then the destination
        "cp -t dst /etc/passwd",  # /etc/passwd is a source: read, not written
        "install -m 755 /usr/bin/ls bin/",
        "echo x | tee out.txt",
        "tee -a log.txt",
        "install -m 755 x bin/x",
        "mkswap swapfile",
        "sfdisk -l /dev/sda",  # the listing forms only look
        "sfdisk --dump /dev/sda",
        "fdisk -l /dev/sda",
        "fdisk --list",
        "parted -l",
        "parted -s /dev/sda print",
        "sgdisk -p /dev/sda",
        "sgdisk --print /dev/sda",
        "dd if=/dev/sda of=disk.img",
    ],
)
def test_writes_elsewhere_and_listings_are_not(line: str) -> None:
    verdict = decide_command(POLICY, line)
    assert verdict.decision is not F, verdict.explain()
    assert not verdict.uncheckable, verdict.explain()


@pytest.mark.parametrize(
    "line",
    [
        'cp x "$D"',  # cp's destination known only at run time
        "cp -t $D x",
        'echo x | tee -a "$F"',
    ],
)
def test_a_run_time_write_target_is_uncheckable(line: str) -> None:
    verdict = decide_command(POLICY, line)
    assert verdict.decision is Permission.PROMPT, verdict.explain()
    assert verdict.uncheckable, verdict.explain()


@pytest.mark.parametrize(
    "line",
    [
        'echo x > "$HOME/out.txt"',
        "echo x > out.txt",
        "echo x > ./logs/out.txt",
        "ls 2>/dev/null",
        'echo x > "$F"',  # a run-time redirection target: asked, answerable (ADR 0028, 8)
        "echo x >> $(cmd)",
        'echo "run $$" >> "$(dirname "$0")/effects.log"',
        "echo x &> $OUT",
    ],
)
def test_a_write_target_that_cannot_be_protected_is_only_asked(line: str) -> None:
    verdict = decide_command(POLICY, line)
    assert verdict.decision is not F, verdict.explain()
    assert not verdict.uncheckable, verdict.explain()
