"""yagent started in a subfolder of a repository works on the repository, as `git` does — and
every command agrees on that: `run` stores its session under the repository's root, so
`sessions` lists it from the same subfolder, and `memory add` there writes the project memory
that runs read (it wrote `<subfolder>/.yagent/memory.json`, which no run ever read)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.cli.test_robustness import configure, yagent
from tests.llm.wire import Reply, WireServer, submitted_frames


def _repo(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "repo"
    deep = root / "src" / "pkg"
    deep.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root, deep


def test_sessions_in_a_subfolder_lists_the_runs_started_there(tmp_path: Path) -> None:
    root, deep = _repo(tmp_path)
    home = tmp_path / "home"
    with WireServer([Reply(events=submitted_frames("all done"))]) as server:
        configure(home, server.url)
        ran = yagent(["run", "fix it"], home, deep)
    assert ran.returncode == 0, ran.stderr
    for where in (deep, root):
        listed = yagent(["sessions"], home, where)
        assert listed.returncode == 0
        assert "fix it" in listed.stdout, (where, listed.stdout)


def test_a_memory_added_in_a_subfolder_reaches_the_runs_of_the_repository(
    tmp_path: Path,
) -> None:
    root, deep = _repo(tmp_path)
    home = tmp_path / "home"
    added = yagent(["memory", "add", "always use tabs"], home, deep)
    assert added.returncode == 0, added.stderr
    assert str(root / ".yagent" / "memory.json") in added.stdout
    assert not (deep / ".yagent").exists()
    listed = yagent(["memory", "list"], home, root)
    assert "always use tabs" in listed.stdout
    with WireServer([Reply(events=submitted_frames("all done"))]) as server:
        configure(home, server.url)
        ran = yagent(["run", "hi"], home, deep)
        assert ran.returncode == 0, ran.stderr
        sent = str(server.received[0].body["messages"])
    assert "always use tabs" in sent
