"""`make demo` as a person runs it: a real process on the bundled recording, with a PATH on which
the venv's `yagent` is not (a fresh clone after `make demo`: nothing was installed by hand). The
commands its last lines suggest must run as printed, from that same shell."""

from __future__ import annotations

import os
import re
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
