"""`make demo-director`: the Director's offline demo, run as a person runs it (a real process,
the bundled recording, real tools and stores), in a temporary directory of the test's own."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from yagent.llm.replay import Recording

DEMO = Path(__file__).resolve().parents[2] / "demo"


@pytest.mark.timeout(120)
def test_the_director_demo_replays_two_parallel_delegations_and_a_refused_one(
    tmp_path: Path,
) -> None:
    (tmp_path / "user").mkdir()
    env = {**os.environ, "TMPDIR": str(tmp_path), "HOME": str(tmp_path / "user")}
    for name in ("YAGENT_HOME", "YAGENT_PROVIDER", "YAGENT_MODEL", "YAGENT_CONCURRENCY"):
        env.pop(name, None)
    done = subprocess.run(
        [sys.executable, "-m", "yagent.cli.demodirector", str(DEMO)],
        env=env,
        capture_output=True,
        text=True,
        timeout=100,
        check=False,
    )
    out = done.stdout
    assert done.returncode == 0, done.stderr
    assert "replay matched the recording" in out
    # the delegations' lines under their names; the refused one is said, with its rule
    assert "[repo.r1] started (repo)" in out
    assert "[coding.c1] started (coding)" in out
    assert "[devops.d1] refused topology (not_allowed)" in out
    assert "[repo.r1] completed" in out
    assert "[coding.c1] completed" in out
    assert "[blueprint] folded 1: calc.average divisor" in out
    (kept,) = [p for p in tmp_path.iterdir() if p.name.startswith("yagent-demo-")]
    usage = kept / "workspace" / "docs" / "USAGE.md"
    assert usage.read_text().startswith("# Using calc")


def test_the_director_recording_holds_the_director_and_its_two_delegations() -> None:
    recording = Recording.load(DEMO / "director-recording.json")
    assert sorted(recording.agents) == ["coding.c1", "director", "repo.r1"]
