"""app.projectfolders: one digest per folder, changed by any edit, addition or removal."""

from __future__ import annotations

from pathlib import Path

from yagent.app import projectfolders


def test_a_folders_digest_moves_with_every_file_that_matters(tmp_path: Path) -> None:
    assert projectfolders.digests(tmp_path) == {}
    agents = tmp_path / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "a.md").write_text("---\nname: alpha\n---\none")
    first = projectfolders.digests(tmp_path)[projectfolders.AGENTS]
    (agents / "notes.txt").write_text("ignored")
    assert projectfolders.digests(tmp_path)[projectfolders.AGENTS] == first
    (agents / "b.md").write_text("two")
    second = projectfolders.digests(tmp_path)[projectfolders.AGENTS]
    assert second != first
    (agents / "b.md").write_text("two!")
    assert projectfolders.digests(tmp_path)[projectfolders.AGENTS] != second
    (agents / "b.md").unlink()
    assert projectfolders.digests(tmp_path)[projectfolders.AGENTS] == first
    assert projectfolders.withheld(tmp_path, projectfolders.AGENTS) == [
        ("agents.alpha", ".claude/agents/a.md")
    ]


def test_skill_grants_are_what_waits_and_absent_folders_need_nothing(tmp_path: Path) -> None:
    folder = tmp_path / ".claude" / "skills" / "s"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: s\ndescription: d\nallowed-tools: Bash\n---\n")
    assert projectfolders.withheld(tmp_path, projectfolders.CLAUDE_SKILLS) == [
        ("skills.s.allowed-tools", "Bash")
    ]
