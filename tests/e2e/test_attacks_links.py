"""Forbidden targets named through links, symbolic modes, the built-in rules for other destroyers,
and script files — against a real `yagent run --json -y` on the `yolo` preset (commands run on
the host, unasked; a few on `full-auto` too) and a scripted OpenAI-compatible server on
loopback, with only the built-in rules
(docs/adr/0028-links-scripts-and-destroyers-judged-where-they-lead.md).

`$HOME` is a sibling temp dir holding canary files; the workspace holds a link to it, scripts
that wipe it, and a harmless script. Every line aimed at the home is refused — as forbidden when
the disk says what it names, as a question nobody could answer when only run time knows (a link
made on the same line, a script written on the same line, a script too large to read) — the
canaries survive, and the control lines (a deletion of an expendable sibling, a harmless script)
really run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_providers import openai_reply
from tests.llm.wire import WireServer
from yagent.kernel.confine.cmdpolicy.scripts import MAX_SCRIPT_BYTES
from yagent.llm.scripted import call, calls

FORBIDDEN = [
    "rm -rf ./homelink/",  # a link to the home, already in the workspace
    "rm -rf homelink/*",
    "rm -rf homelink/sub/..",
    "find homelink/ -delete",
    "chmod -R a+rwx ~",  # symbolic spellings of a recursive mode change of the home
    "chmod -R o+w ~/",
    "chmod -R u=rwx,go=rwx $HOME",
    "chmod --recursive 0777 homelink/",
    "chown -R nobody ~",
    "chgrp -R nogroup homelink/",
    "rsync -a --delete empty/ ~/",
    "rsync -r --del empty/ homelink/",
    "mv ~ {tmp}/moved-home",
    "find ~ -delete",
    "bash ./wipe.sh",  # a workspace script holding `rm -rf ~/`
    "sh wipe.sh",
    ". ./wipe.sh",
    "source wipe.sh",
    "./wipe.sh",
    "bash nested.sh",  # a script running the wiping script
]
RUN_TIME = [
    "ln -s {home} r && rm -rf r/",  # the link is made on the line: a run-time fact
    "ln -sfn {home} safelink && rm -rf safelink/",  # a harmless link re-pointed first
    "cd homelink && rm -rf .",
    "printf 'rm -rf ~/\\n' > fresh.sh && sh fresh.sh",  # the script is written on the line
    "cp wipe.sh ok.sh && bash ok.sh",
    "bash big.sh",  # too large to read
    "python3 -c 'import os; os.system(\"rm -rf ~\")'",
    'node -e \'require("child_process").execSync("rm -rf ~")\'',
    "sh < wipe.sh",  # a shell reading its code from a redirection: not read, asked
]


def _run(
    tmp_path: Path, work: Path, lines: list[str], preset: str = "yolo"
) -> list[dict[str, Any]]:
    yhome = tmp_path / "yhome"
    yhome.mkdir(exist_ok=True)
    items = [("run_bash", json.dumps({"command": c}), f"c{i}") for i, c in enumerate(lines)]
    turns = [
        calls(items),
        call("agent_exit", json.dumps({"reason": "done", "summary": "ok"}), call_id="x1"),
    ]
    with WireServer([openai_reply(t) for t in turns]) as server:
        (yhome / "config.toml").write_text(
            f'[llm]\nprovider = "openai"\nmodel = "gpt-test"\nbase_url = "{server.url}/v1"\n'
            f'step_retries = 0\n\n[agent]\npreset = "{preset}"\n'
        )
        env = {**os.environ, "HOME": str(tmp_path / "home"), "YAGENT_HOME": str(yhome)}
        env["OPENAI_API_KEY"] = "sk-test-not-real"
        done = subprocess.run(
            [sys.executable, "-m", "yagent.cli", "run", "--json", "-y", "go"],
            env=env,
            cwd=work,
            capture_output=True,
            text=True,
            timeout=110,
        )
    assert done.returncode == 0, done.stdout + done.stderr
    results = [json.loads(x) for x in done.stdout.splitlines() if '"tool_result"' in x]
    assert len(results) == len(lines) + 1, done.stdout
    return results[:-1]


@pytest.fixture
def work(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    (home / "sub").mkdir(parents=True)
    (home / "canary.txt").write_text("alive\n")
    (home / "sub" / "canary.txt").write_text("alive\n")
    (tmp_path / "expendable").mkdir()
    work = tmp_path / "work"
    (work / "empty").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(work)], check=True, timeout=30)
    (work / "homelink").symlink_to(home)
    (work / "safelink").symlink_to(work / "empty")
    (work / "wipe.sh").write_text("#!/bin/sh\necho cleaning\nrm -rf ~/\n")
    (work / "wipe.sh").chmod(0o755)
    (work / "nested.sh").write_text("set -e\nsh ./wipe.sh\n")
    (work / "ok.sh").write_text("echo fine\n")
    (work / "harmless.sh").write_text("#!/bin/sh\ntouch made-by-script\n")
    filler = "echo filler\n" * (MAX_SCRIPT_BYTES // 12 + 1)
    (work / "big.sh").write_text(filler + "touch made-by-big\n")
    return work


def _alive(tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert (home / "canary.txt").read_text() == "alive\n"
    assert (home / "sub" / "canary.txt").read_text() == "alive\n"
    assert oct((home / "canary.txt").stat().st_mode & 0o777) == oct(0o644)
    assert not (tmp_path / "moved-home").exists()


def test_destroyers_of_the_home_are_forbidden_under_yes(tmp_path: Path, work: Path) -> None:
    (tmp_path / "home" / "canary.txt").chmod(0o644)
    lines = [s.format(tmp=tmp_path) for s in FORBIDDEN]
    controls = [f"rm -rf {tmp_path}/expendable", "bash ./harmless.sh", "rm -rf homelink"]
    results = _run(tmp_path, work, [*lines, *controls])
    for line, result in zip(lines, results, strict=False):
        assert result["ok"] is False, (line, result)
        assert "forbidden" in result["content"], (line, result)
        assert "builtin-" in result["content"], (line, result)
    _alive(tmp_path)
    ran = results[len(lines) :]
    assert all(r["ok"] is True for r in ran), ran  # the controls ran, on the host
    assert not (tmp_path / "expendable").exists()
    assert (work / "made-by-script").exists()
    assert not (work / "homelink").exists()  # removing the link itself is not removing the home


def test_run_time_links_and_scripts_are_not_approved_by_yes(tmp_path: Path, work: Path) -> None:
    (tmp_path / "home" / "canary.txt").chmod(0o644)
    lines = [s.format(home=tmp_path / "home") for s in RUN_TIME]
    results = _run(tmp_path, work, lines)
    for line, result in zip(lines, results, strict=False):
        assert result["ok"] is False, (line, result)
        content = result["content"]
        assert "nobody could be asked" in content, (line, result)
        assert "adr/0031" in content, (line, result)
    _alive(tmp_path)
    assert not (work / "made-by-big").exists()


def test_under_full_auto_the_same_lines_are_refused(tmp_path: Path, work: Path) -> None:
    """`full-auto` runs questions unasked in the sandbox: forbidden still denies, and a run-time
    link or script is still put to a person (nobody here: refused)."""
    (tmp_path / "home" / "canary.txt").chmod(0o644)
    forbidden = ["rm -rf ./homelink/", "chmod -R a+rwx ~", "bash ./wipe.sh", "./wipe.sh"]
    run_time = [s.format(home=tmp_path / "home") for s in RUN_TIME[:2]]
    results = _run(tmp_path, work, [*forbidden, *run_time], preset="full-auto")
    for line, result in zip(forbidden, results, strict=False):
        assert result["ok"] is False, (line, result)
        assert "forbidden" in result["content"], (line, result)
    for line, result in zip(run_time, results[len(forbidden) :], strict=True):
        assert result["ok"] is False, (line, result)
        assert "nobody could be asked" in result["content"], (line, result)
    _alive(tmp_path)


# Writers into the system's files and disks (docs/adr/0028, decision 8). Every target lies in a
# directory that does not exist, so even a line that slipped through would fail to write.
WRITERS = [
    "cp ok.sh /etc/yagent-absent-dir/passwd",
    "echo x | tee /etc/yagent-absent-dir/passwd",
    "tee -a /etc/yagent-absent-dir/sudoers < ok.sh",
    "cp -t /etc/yagent-absent-dir ok.sh",
    "install ok.sh /usr/yagent-absent-dir/ls",
    "cp /dev/null /dev/disk/yagent-absent/x",
    "mkswap /dev/disk/yagent-absent/x",
    "sfdisk /dev/disk/yagent-absent/x < ok.sh",
    "fdisk /dev/disk/yagent-absent/x < ok.sh",
    "parted -s /dev/disk/yagent-absent/x mklabel gpt",
    "sgdisk -Z /dev/disk/yagent-absent/x",
]


def test_writers_into_system_files_and_disks_are_forbidden_under_yes(
    tmp_path: Path, work: Path
) -> None:
    """cp/tee/install into /etc or /usr and partitioners on disks are forbidden; a cp to a
    run-time target is a question nobody could answer (the sibling canary survives); writers into
    the workspace really run. (A write redirection to a run-time target stays an ordinary asked
    write that `-y` answers: ADR 0028, decision 8.)"""
    canary = tmp_path / "home" / "canary.txt"
    run_time = [f'D={canary}; cp ok.sh "$D"']
    controls = ["cp ok.sh copied.txt", "echo x | tee teed.txt", 'F=out.txt; echo x > "$HOME/f"']
    results = _run(tmp_path, work, [*WRITERS, *run_time, *controls])
    for line, result in zip(WRITERS, results, strict=False):
        assert result["ok"] is False, (line, result)
        assert "forbidden" in result["content"], (line, result)
        assert "builtin-" in result["content"], (line, result)
    for line, result in zip(run_time, results[len(WRITERS) :], strict=False):
        assert result["ok"] is False, (line, result)
        assert "nobody could be asked" in result["content"], (line, result)
    assert canary.read_text() == "alive\n"
    ran = results[len(WRITERS) + len(run_time) :]
    assert all(r["ok"] is True for r in ran), ran
    assert (work / "copied.txt").read_text() == "echo fine\n"
    assert (work / "teed.txt").read_text() == "x\n"
    assert (tmp_path / "home" / "f").read_text() == "x\n"
