"""A repository's instructions files as links out, against the real product: a `yagent run
--json` process against a recording OpenAI-compatible server on loopback, no tool call at all.

yagent puts the workspace's `AGENTS.md` / `CLAUDE.md` (one per directory from the root down to
where the person started) into the system prompt. A checkout can ship them as symbolic links:
to the person's `~/.ssh/id_rsa`, to yagent's own environment (`/proc/self/environ`, the API key
in it) or to a file beside the workspace. None of those may reach the model: a file that leads
out of the workspace, or into what every tool is refused, is skipped with a visible note — like
a CLAUDE.md `@import` that would.
"""

from __future__ import annotations

import os
from pathlib import Path

from tests.e2e.conventions import git_repo, run

KEY = "SECRET-SSH-3c1a"
BESIDE = "SECRET-BESIDE-8e44"


def test_instruction_files_linked_out_of_the_workspace_are_not_sent(tmp_path: Path) -> None:
    ssh = tmp_path / "user" / ".ssh"  # the run's HOME is tmp_path/user
    ssh.mkdir(parents=True)
    (ssh / "id_rsa").write_text(f"{KEY}\n")
    (tmp_path / "beside").mkdir()
    (tmp_path / "beside" / "notes.md").write_text(f"{BESIDE}\n")
    ws = git_repo(tmp_path / "ws")  # started in a/b: the root's, a/'s and a/b/'s files
    (ws / "a" / "b").mkdir(parents=True)
    (ws / "CLAUDE.md").symlink_to(ssh / "id_rsa")
    (ws / "a" / "AGENTS.md").symlink_to(os.path.relpath(tmp_path / "beside" / "notes.md", ws / "a"))
    (ws / "a" / "b" / "AGENTS.override.md").symlink_to("/proc/self/environ")
    (ws / "a" / "b" / "keep.md").write_text("x\n")
    done = run(tmp_path, ["go"], cwd=ws / "a" / "b")
    assert done.done.returncode == 0, done.done.stdout[-2000:] + done.done.stderr[-2000:]
    system = done.system
    assert KEY not in system
    assert BESIDE not in system
    assert "sk-test-not-real" not in system
    assert system.count("skipped:") >= 3, system[-2000:]
