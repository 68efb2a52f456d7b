"""Skills: folder source (front matter, precedence, visible problems) and use_skill."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.tools.conftest import make_surface
from yagent.tools import skills
from yagent.tools.adapter import Adapter, ToolContext
from yagent.tools.skills import FolderSkillSource, SkillRoot, parse_skill


def write_skill(root: Path, folder: str, text: str, files: tuple[str, ...] = ()) -> None:
    d = root / folder
    d.mkdir(parents=True)
    (d / "SKILL.md").write_text(text)
    for f in files:
        (d / f).parent.mkdir(parents=True, exist_ok=True)
        (d / f).write_text("x")


GOOD = "---\nname: notes\ndescription: Write release notes.\n---\nStep 1. Read the log.\n"


def test_source_reads_front_matter_and_reports_problems(tmp_path: Path) -> None:
    project, user = tmp_path / "p", tmp_path / "u"
    write_skill(project, "notes", GOOD, files=("tpl/a.md",))
    write_skill(user, "notes", GOOD.replace("Write release notes.", "User copy."))
    write_skill(user, "other", "---\nname: other\ndescription: Other.\n---\nbody")
    write_skill(user, "broken", "no front matter")
    write_skill(user, "nameless", "---\ndescription: d\n---\n")
    write_skill(user, "undescribed", "---\nname: n\n---\n")
    write_skill(user, "badyaml", "---\nname: [\n---\n")
    write_skill(user, "notmap", "---\n- a\n---\n")
    write_skill(user, "unclosed", "---\nname: x")
    (user / "empty").mkdir()
    source = FolderSkillSource([project, user])
    assert [s.name for s in source.list()] == ["notes", "other"]
    notes = source.get("notes")
    assert notes is not None
    assert notes.description == "Write release notes."  # project wins
    assert notes.files == ("tpl/a.md",)
    reasons = " | ".join(r for _, r in source.problems())
    for expected in (
        "no front matter",
        "needs a 'name'",
        "needs a 'description'",
        "not valid YAML",
        "must be a mapping",
        "not closed",
        "no SKILL.md",
    ):
        assert expected in reasons
    assert FolderSkillSource([tmp_path / "missing"]).list() == []


@pytest.mark.anyio
async def test_use_skill_through_the_adapter(
    workspace: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_skill(workspace / ".yagent" / "skills", "notes", GOOD, files=("a", "b", "c"))
    source = FolderSkillSource.for_workspace(workspace, home)
    surface = make_surface(workspace, home, deferred=False)
    adapter = Adapter(
        ToolContext(workspace, surface, skills=source), {"use_skill": skills.use_skill}
    )
    res = await adapter.call("use_skill", '{"name": "notes"}', "c1")
    body = json.loads(res.content)
    assert body["instructions"] == "Step 1. Read the log."
    assert body["files"] == ["a", "b", "c"]
    monkeypatch.setattr(skills, "MAX_FILES_LISTED", 2)
    body = json.loads((await adapter.call("use_skill", '{"name": "notes"}', "c2")).content)
    assert body["files"] == ["a", "b"]
    assert "2 of 3" in body["files_truncated"]
    res = await adapter.call("use_skill", '{"name": "nope"}', "c3")
    assert json.loads(res.content)["kind"] == "not_found"
    assert "available: notes" in json.loads(res.content)["error"]
    bare = Adapter(ToolContext(workspace, surface), {"use_skill": skills.use_skill})
    res = await bare.call("use_skill", '{"name": "notes"}', "c4")
    assert "no skills" in json.loads(res.content)["error"]


def test_allowed_tools_grant_only_whole_known_tools_from_a_granting_root(tmp_path: Path) -> None:
    folder = tmp_path / "root" / "s"
    folder.mkdir(parents=True)
    doc_path = folder / "SKILL.md"
    doc_path.write_text(
        "---\nname: s\ndescription: d\nallowed-tools: Read, Bash(git add:*), Raed\n---\nbody\n"
    )
    doc = parse_skill(doc_path, SkillRoot(tmp_path / "root", True))
    assert doc.grants == ("read_file",)
    assert any("narrowed to a pattern" in n for n in doc.not_granted)
    assert any("did you mean Read" in n for n in doc.not_granted)
    held = parse_skill(doc_path, SkillRoot(tmp_path / "root", False, "not trusted here"))
    assert held.grants == ()
    assert "Read: not trusted here" in held.not_granted


def test_a_skill_folder_linking_elsewhere_is_not_opened_for_reading(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    real = root / "real"
    real.mkdir(parents=True)
    (real / "SKILL.md").write_text("---\nname: real\ndescription: d\n---\n")
    elsewhere = tmp_path / "state"
    elsewhere.mkdir()
    (elsewhere / "SKILL.md").write_text("---\nname: linked\ndescription: d\n---\n")
    (root / "linked").symlink_to(elsewhere)
    source = FolderSkillSource([root])
    assert {s.name for s in source.list()} == {"real", "linked"}
    assert source.folders() == (real.resolve(),)
