"""What the disk says, when the host lets cmdpolicy look (`decide_command(disk=True)`): path
operands judged where their links lead, script files read and judged as if typed, and lines
that may make links or write scripts first left to a person (run-time facts).

Every target is a temp dir (`home` stands for `~`); tests/e2e/test_attacks_links.py drives the
same lines through a real `yagent run -y`.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from yagent.kernel.confine.cmdpolicy import Permission, Policy, PrefixRule, decide_command
from yagent.kernel.confine.cmdpolicy.decide import Verdict
from yagent.kernel.confine.cmdpolicy.scripts import MAX_SCRIPT_BYTES

A, P, F = Permission.ALLOW, Permission.PROMPT, Permission.FORBIDDEN
POLICY = Policy(
    [
        PrefixRule("home", ("rm", "-rf", "~"), F),
        PrefixRule("chmod-home", ("chmod", "-R", "~"), F),
        PrefixRule("echo", ("echo",), A),
    ]
)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    (home / "sub").mkdir(parents=True)
    ws = tmp_path / "ws"
    (ws / "empty").mkdir(parents=True)
    (ws / "homelink").symlink_to(home)
    (ws / "deep").mkdir()
    (ws / "deep" / "up").symlink_to("../homelink")
    (ws / "wipe.sh").write_text("#!/bin/bash\necho cleaning\nrm -rf ~/\n")
    (ws / "wipe.sh").chmod(0o755)
    (ws / "nested.sh").write_text(". ./wipe.sh\n")
    (ws / "ok.sh").write_text("echo fine\n")
    (ws / "tool.py").write_text("#!/usr/bin/env python3\nimport os\nos.system('rm -rf ~')\n")
    (ws / "tool.py").chmod(0o755)
    return ws


def _judge(ws: Path, line: str, *, disk: bool = True, **kw: object) -> Verdict:
    home = str(ws.parent / "home")
    return decide_command(POLICY, line, cwd=str(ws), home=home, disk=disk, **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("line", "rule"),
    [
        ("rm -rf homelink/", "home"),
        ("rm -rf ./homelink/.", "home"),
        ("rm -rf homelink/*", "home"),
        ("rm -rf homelink/sub/..", "home"),
        ("rm -rf deep/up/", "home"),  # a link to a link
        ("rm -rf {ws}/homelink/", "home"),
        ("find homelink/ -delete", "home"),
        ("chmod -R 700 homelink", "chmod-home"),  # chmod follows the link it is named by
        ("bash wipe.sh", "home"),
        ("sh ./wipe.sh", "home"),
        (". wipe.sh", "home"),
        ("source ./wipe.sh", "home"),
        ("./wipe.sh", "home"),
        ("{ws}/wipe.sh", "home"),
        ("bash nested.sh", "home"),
        ("timeout 5 bash wipe.sh", "home"),
        ("ln -s x y; rm -rf homelink/", "home"),  # a link that exists is judged where it leads
    ],
)
def test_a_forbidden_target_named_through_a_link_or_a_script_is_forbidden(
    ws: Path, line: str, rule: str
) -> None:
    verdict = _judge(ws, line.format(ws=ws))
    assert verdict.decision is F, verdict.explain()
    assert rule in {r.name for r in verdict.rules}


@pytest.mark.parametrize(
    "line",
    [
        "rm -rf homelink",  # rm removes the link itself
        "find homelink -delete",  # find does not follow a starting point's link (-P)
        "rm -rf empty/",
        "bash ok.sh",
        "./tool.py",  # a program that is not a shell: out of reach, as `python3 tool.py`
        "cat ok.sh && bash ok.sh",  # read, not written
        "bash ok.sh; bash ok.sh",
        "mv homelink elsewhere",  # moves the link
        "ln -s empty e2",  # the one link maker: its own operands are seen
    ],
)
def test_what_only_names_a_link_or_a_harmless_script_is_not_forbidden(ws: Path, line: str) -> None:
    verdict = _judge(ws, line)
    assert verdict.decision is not F, verdict.explain()
    assert not verdict.uncheckable, verdict.explain()


def test_without_the_disk_operands_are_read_lexically(ws: Path) -> None:
    for line in ("rm -rf homelink/", "bash wipe.sh", "./wipe.sh"):
        verdict = _judge(ws, line, disk=False)
        assert verdict.decision is not F, verdict.explain()


@pytest.mark.parametrize(
    "line",
    [
        "ln -s {home} r && rm -rf r/",
        "ln -sfn {home} empty && rm -rf empty/",
        "cp -a homelink r && rm -rf r/",
        "tar xf links.tar && rm -rf r/*",
        "git checkout evil && chmod -R 777 r/",
        "mv homelink r; rm -rf r/",
        "printf 'rm -rf ~\\n' > fresh.sh && sh fresh.sh",  # missing at judgement
        "echo 'rm -rf ~' >> ok.sh && bash ok.sh",  # written on the line first
        "cp wipe.sh ok.sh && bash ok.sh",
        "tee ok.sh < wipe.sh; . ok.sh",
        "./missing.sh",
        "cd deep && bash ../ok.sh",  # where it is depends on the `cd`
        "bash {home}/../outside.sh",  # outside the workspace: never read (it would be shown)
        "bash /dev/stdin",
    ],
)
def test_run_time_links_and_scripts_are_uncheckable(ws: Path, line: str) -> None:
    (ws.parent / "outside.sh").write_text("echo SECRET-CONTENT\n")
    verdict = _judge(ws, line.format(home=ws.parent / "home"))
    assert verdict.uncheckable, verdict.explain()
    assert verdict.decision is not A
    assert "SECRET-CONTENT" not in verdict.explain()


def test_a_script_too_large_or_not_text_is_uncheckable(ws: Path) -> None:
    (ws / "big.sh").write_text("echo x\n" * (MAX_SCRIPT_BYTES // 7 + 1))
    (ws / "bin.sh").write_bytes(b"echo \xff\xfe\n")
    for name in ("big.sh", "bin.sh"):
        verdict = _judge(ws, f"bash {name}")
        assert verdict.uncheckable, verdict.explain()


def test_a_fifo_named_as_a_script_is_never_waited_on(ws: Path) -> None:
    os.mkfifo(ws / "pipe.sh")
    verdict = _judge(ws, "bash pipe.sh")
    assert verdict.uncheckable, verdict.explain()
    assert "not a regular file" in verdict.explain()


def test_a_script_the_host_hides_is_not_read(ws: Path) -> None:
    verdict = _judge(ws, "bash wipe.sh", readable=lambda path: not path.endswith("wipe.sh"))
    assert verdict.decision is not F
    assert verdict.uncheckable
    assert "echo cleaning" not in verdict.explain()


def test_a_path_too_long_to_resolve_is_uncheckable(ws: Path) -> None:
    line = "rm -rf " + "/".join(["d" * 200] * 25) + "/x"
    verdict = _judge(ws, line)
    assert verdict.uncheckable, verdict.explain()


def test_a_program_installed_outside_the_workspace_is_not_read(ws: Path) -> None:
    """`/usr/bin/x`, a virtualenv's `python` run by their path: programs, not the line's scripts."""
    for line in (f"{sys.executable} -c pass", "/bin/sh -c 'echo hi'", "/usr/bin/env true"):
        verdict = _judge(ws, line)
        assert not verdict.uncheckable, verdict.explain()
