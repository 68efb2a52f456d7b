"""`make demo` as a person runs it: a real process on the bundled recording, with a PATH on which
the venv's `yagent` is not (a fresh clone after `make demo`: nothing was installed by hand). The
commands its last lines suggest must run as printed, from that same shell."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

DEMO = Path(__file__).resolve().parents[2] / "demo"


@pytest.mark.timeout(120)
def test_the_demo_fixes_the_test_and_its_inspect_commands_run_as_printed(tmp_path: Path) -> None:
    (tmp_path / "user").mkdir()
    venv_bin = str(Path(sys.executable).parent)
    person_path = os.pathsep.join(
        p for p in os.environ.get("PATH", "").split(os.pathsep) if p and p != venv_bin
    )
    env = {**os.environ, "TMPDIR": str(tmp_path), "HOME": str(tmp_path / "user")}
    env["PATH"] = person_path
    for name in ("YAGENT_HOME", "YAGENT_PROVIDER", "YAGENT_MODEL"):
        env.pop(name, None)
    done = subprocess.run(
        [sys.executable, "-m", "yagent.cli.demo", str(DEMO)],
        env=env,
        capture_output=True,
        text=True,
        timeout=100,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "replay matched the recording" in done.stdout
    assert "3 passed" in done.stdout
    hints = [line.strip() for line in done.stdout.splitlines() if "YAGENT_HOME=" in line]
    assert len(hints) == 2, done.stdout
    assert re.search(r" sessions show [0-9a-f]{12}$", hints[0]), hints[0]
    for hint in hints:  # as the person would paste them into the shell that ran `make demo`
        ran = subprocess.run(
            ["bash", "-c", hint.replace(" --html", " --html trace.html")],
            env=env,
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert ran.returncode == 0, (hint, ran.stderr)
    assert (tmp_path / "trace.html").stat().st_size > 0


ROOT = Path(__file__).resolve().parents[2]


def test_make_demo_sets_up_only_what_the_demo_needs(tmp_path: Path) -> None:
    """A person without PostgreSQL, Node or a browser (or without root to install them) can run
    `make demo`: it checks git and bubblewrap, makes the venv, and installs no test servers."""
    planned = subprocess.run(
        ["make", "-n", "demo"], cwd=ROOT, capture_output=True, text=True, timeout=60, check=True
    ).stdout
    assert "scripts/setup-system.sh --demo" in planned
    assert "setup-mcp.sh" not in planned
    assert "-m yagent.cli.demo demo" in planned
    tools = tmp_path / "bin"  # git, make and bwrap there; no chromium, node, npm, PostgreSQL
    tools.mkdir()
    for name in ("git", "make", "bwrap", "id"):
        found = shutil.which(name)
        assert found is not None, name
        (tools / name).symlink_to(found)
    checked = subprocess.run(
        ["/bin/bash", str(ROOT / "scripts" / "setup-system.sh"), "--demo"],
        env={"PATH": str(tools)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert checked.returncode == 0, checked.stderr
    assert checked.stdout + checked.stderr == ""  # nothing missing: nothing installed or asked
