"""A repository's instructions and skills as links out, against the real product: a `yagent run
--json` process against a recording OpenAI-compatible server on loopback.

yagent puts the workspace's `AGENTS.md` / `CLAUDE.md` (one per directory from the root down to
where the person started) into the system prompt, and lists its skills (`.claude/skills/*/
SKILL.md`: name and description) there too, `use_skill` returning a skill's body. A checkout
can ship any of them as symbolic links: to the person's `~/.ssh/id_rsa`, to yagent's own
environment (`/proc/self/environ`, the API key in it) or to a file beside the workspace. None of
those may reach the model: an instructions file that leads out of the workspace, or into what
every tool is refused, is skipped with a visible note — like a CLAUDE.md `@import` that would —
and a project's skill that leads out of the workspace is not a skill (listed as a problem).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.e2e.conventions import EXIT, git_repo, run
from yagent.llm.scripted import call

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


def test_a_projects_skill_linked_out_of_the_workspace_is_not_read(tmp_path: Path) -> None:
    ssh = tmp_path / "user" / ".ssh"
    ssh.mkdir(parents=True)
    (ssh / "id_rsa").write_text(f"---\nname: keyname\ndescription: {KEY}\n---\n{KEY} body\n")
    (tmp_path / "beside.md").write_text(f"---\nname: beside\ndescription: d\n---\n{BESIDE}\n")
    ws = git_repo(tmp_path / "ws")
    for name, target in (("key", ssh / "id_rsa"), ("beside", tmp_path / "beside.md")):
        (ws / ".claude" / "skills" / name).mkdir(parents=True)
        (ws / ".claude" / "skills" / name / "SKILL.md").symlink_to(target)
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "SKILL.md").write_text(
        f"---\nname: far\ndescription: {BESIDE}\n---\nx\n"
    )
    (ws / ".claude" / "skills" / "far").symlink_to(tmp_path / "elsewhere")
    (ws / ".claude" / "skills" / "ok").mkdir()
    (ws / ".claude" / "skills" / "ok" / "SKILL.md").write_text(
        "---\nname: ok\ndescription: fine\n---\nb\n"
    )
    turns = [
        call("use_skill", '{"name": "beside"}', call_id="u1"),
        call("use_skill", '{"name": "keyname"}', call_id="u2"),
        EXIT,
    ]
    done = run(tmp_path, ["go"], cwd=ws, turns=turns)
    assert done.done.returncode == 0, done.done.stdout[-2000:] + done.done.stderr[-2000:]
    sent = json.dumps(done.received)
    assert KEY not in sent
    assert BESIDE not in sent
    assert "- ok: fine" in done.system, "a skill of the workspace's own is listed"
