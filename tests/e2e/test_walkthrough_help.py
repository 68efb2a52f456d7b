"""A newcomer's first command: `yagent --help` names every agent `--agent` accepts (and no agent
that does not exist), so the help and the refusal of an unknown agent agree."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from yagent.agents.catalog import BUILTIN_AGENTS


def test_the_help_names_every_built_in_agent(tmp_path: Path) -> None:
    env = {**os.environ, "HOME": str(tmp_path), "YAGENT_HOME": str(tmp_path / "yhome")}
    done = subprocess.run(
        [sys.executable, "-m", "yagent.cli", "--help"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    said = " ".join(done.stdout.split())
    listed = re.search(r"Agent to run \(([^)]*)\)", said)
    assert listed is not None, said
    names = {n.strip() for n in listed.group(1).replace(" or ", ", ").split(",")}
    assert set(BUILTIN_AGENTS) <= names, names
    assert "custom" not in names  # not an agent: `--agent custom` is refused
