"""Skills from Claude Code's folders through the real CLI (issue 16, conventions): what the model
is shown, which skill files it may read, and what `allowed-tools` lets run without asking."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conventions import EXIT, git_repo, homes, run
from yagent.llm.scripted import call


def skill(folder: Path, name: str, description: str, extra: str = "", body: str = "Do it.") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: {description}\n{extra}---\n{body}\n"
    )
    return folder


def tool_texts(received: list[Any]) -> dict[str, str]:
    last = received[-1]["messages"]
    return {m["tool_call_id"]: str(m["content"]) for m in last if m["role"] == "tool"}


@pytest.mark.timeout(120)
def test_every_skill_of_every_folder_is_listed_within_a_budget(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo")
    where = homes(tmp_path)
    skill(repo / ".claude" / "skills" / "pdf", "pdf-forms", "Fill in PDF forms.")
    skill(where.user / ".claude" / "skills" / "deploy", "deploy-app", "Deploy to staging.")
    skill(where.yagent / "skills" / "notes", "release-notes", "Write release notes.")
    result = run(tmp_path, ["-C", str(repo), "fix the login bug"], cwd=tmp_path)
    assert result.done.returncode == 0, result.done.stderr[-2000:]
    system = result.system
    for line in (
        "- pdf-forms: Fill in PDF forms.",
        "- deploy-app: Deploy to staging.",
        "- release-notes: Write release notes.",
    ):
        assert line in system, "every skill is listed, relevant to the task or not"
    assert "more skill" not in system


@pytest.mark.timeout(120)
def test_skills_over_the_list_budget_are_counted_on_a_visible_line(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo")
    for i in range(80):
        skill(repo / ".claude" / "skills" / f"s{i:02d}", f"skill-{i:02d}", f"Does thing {i}. " * 8)
    result = run(tmp_path, ["-C", str(repo), "look"], cwd=tmp_path)
    assert result.done.returncode == 0, result.done.stderr[-2000:]
    system = result.system
    listed = [ln for ln in system.splitlines() if ln.startswith("- skill-")]
    assert 0 < len(listed) < 80
    assert f"({80 - len(listed)} more skills not listed here" in system


@pytest.mark.timeout(150)
def test_skill_folders_are_readable_and_only_they(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo")
    where = homes(tmp_path)
    user_skill = skill(where.user / ".claude" / "skills" / "deploy", "deploy-app", "Deploy.")
    (user_skill / "reference.md").write_text("USER-SKILL-REFERENCE")
    own_skill = skill(where.yagent / "skills" / "notes", "release-notes", "Notes.")
    (own_skill / "template.md").write_text("YAGENT-SKILL-TEMPLATE")
    (where.user / "private.md").write_text("PRIVATE-HOME-FILE")
    turns = [
        call("read_file", json.dumps({"path": str(user_skill / "reference.md")}), call_id="r1"),
        call("read_file", json.dumps({"path": str(own_skill / "template.md")}), call_id="r2"),
        call("read_file", json.dumps({"path": str(where.yagent / "config.toml")}), call_id="r3"),
        call("read_file", json.dumps({"path": str(where.user / "private.md")}), call_id="r4"),
        call(
            "write_file",
            json.dumps({"path": str(user_skill / "x.md"), "content": "no"}),
            call_id="w1",
        ),
        EXIT,
    ]
    result = run(tmp_path, ["-C", str(repo), "look"], cwd=tmp_path, turns=turns)
    assert result.done.returncode == 0, result.done.stderr[-2000:]
    texts = tool_texts(result.received)
    assert "USER-SKILL-REFERENCE" in texts["r1"]
    assert "YAGENT-SKILL-TEMPLATE" in texts["r2"], "a skill in yagent's (hidden) home is readable"
    assert "gpt-test" not in texts["r3"], "the rest of yagent's home stays hidden"
    assert "PRIVATE-HOME-FILE" not in texts["r4"], "outside a skill folder: asked as ever"
    assert not (user_skill / "x.md").exists(), "skill folders are read-only"


@pytest.mark.timeout(150)
def test_allowed_tools_of_your_own_skill_run_unasked_an_untrusted_projects_do_not(
    tmp_path: Path,
) -> None:
    repo = git_repo(tmp_path / "repo")
    where = homes(tmp_path)
    skill(
        where.user / ".claude" / "skills" / "mine", "mine", "Mine.", "allowed-tools: Bash, Read\n"
    )
    skill(repo / ".claude" / "skills" / "theirs", "theirs", "Theirs.", "allowed-tools: Bash\n")
    risky = {"command": "echo ran-unasked", "is_dangerous": True}
    turns = [
        call("use_skill", json.dumps({"name": "theirs"}), call_id="u1"),
        call("run_bash", json.dumps(risky), call_id="b1"),
        call("use_skill", json.dumps({"name": "mine"}), call_id="u2"),
        call("run_bash", json.dumps(risky), call_id="b2"),
        EXIT,
    ]
    result = run(tmp_path, ["-C", str(repo), "look"], cwd=tmp_path, turns=turns)
    assert result.done.returncode == 0, result.done.stderr[-2000:]
    texts = tool_texts(result.received)
    assert "the project's .claude/skills is not trusted" in texts["u1"]
    assert "ran-unasked" not in texts["b1"], "an untrusted repository grants itself nothing"
    assert "run_bash" in texts["u2"]
    assert "ran-unasked" in texts["b2"], "your own skill's allowed-tools skip the question"


@pytest.mark.timeout(150)
def test_a_trusted_projects_skill_grants_until_it_changes(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo")
    where = homes(tmp_path)
    theirs = skill(repo / ".claude" / "skills" / "t", "theirs", "Theirs.", "allowed-tools: Bash\n")
    env = {**os.environ, "HOME": str(where.user), "YAGENT_HOME": str(where.yagent)}
    trusted = subprocess.run(
        [sys.executable, "-m", "yagent.cli", "trust", "-C", str(repo), "--yes"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert trusted.returncode == 0, trusted.stderr
    assert ".claude/skills" in trusted.stdout
    risky = {"command": "echo ran-unasked", "is_dangerous": True}
    turns = [
        call("use_skill", json.dumps({"name": "theirs"}), call_id="u1"),
        call("run_bash", json.dumps(risky), call_id="b1"),
        EXIT,
    ]
    result = run(tmp_path, ["-C", str(repo), "look"], cwd=tmp_path, turns=turns)
    assert "ran-unasked" in tool_texts(result.received)["b1"]
    (theirs / "SKILL.md").write_text(
        "---\nname: theirs\ndescription: Theirs.\nallowed-tools: Bash, Write\n---\nmore\n"
    )
    again = run(tmp_path, ["-C", str(repo), "look"], cwd=tmp_path, turns=turns)
    texts = tool_texts(again.received)
    assert "changed since you trusted it" in texts["u1"]
    assert "ran-unasked" not in texts["b1"]
