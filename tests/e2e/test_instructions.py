"""Workspace and instructions through the real CLI (issue 16, conventions): run from a subfolder,
the workspace is the repository's root; the instructions the model receives are merged from the
global file and every directory from the root down to where the person stands, with Codex's
override and Claude Code's CLAUDE.md (and its imports) as they define them."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.conventions import git_repo, homes, run


@pytest.mark.timeout(120)
def test_subfolder_run_uses_the_root_and_merges_instructions_closest_last(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo")
    sub = repo / "pkg" / "api"
    sub.mkdir(parents=True)
    (repo / ".yagent").mkdir()
    # a harmless key (tuning) applies untrusted: proves the root's config was read from `sub`
    (repo / ".yagent" / "config.toml").write_text('[agent]\ndefault = "chat"\n')
    (repo / "AGENTS.md").write_text("ROOT-RULE: use tabs.")
    (repo / "pkg" / "AGENTS.md").write_text("PKG-RULE: replaced by the override.")
    (repo / "pkg" / "AGENTS.override.md").write_text("PKG-OVERRIDE: prefer dataclasses.")
    (sub / "CLAUDE.md").write_text("API-CLAUDE: see @docs/style.md and mail bob@example.com.")
    (sub / "docs").mkdir()
    (sub / "docs" / "style.md").write_text("IMPORTED-STYLE: snake_case.")
    where = homes(tmp_path)
    (where.yagent / "AGENTS.md").write_text("GLOBAL-RULE: be brief.")
    result = run(tmp_path, ["look"], cwd=sub)
    assert result.done.returncode == 0, result.done.stderr[-2000:]
    system = result.system
    assert "You are yagent's Chat agent" in system, "the root's .yagent/config.toml applied"
    assert f"You work in {repo.resolve()}." in system
    assert f"started yagent in {sub.resolve()}" in system
    order = ["GLOBAL-RULE", "ROOT-RULE", "PKG-OVERRIDE", "API-CLAUDE", "IMPORTED-STYLE"]
    positions = [system.index(marker) for marker in order]
    assert positions == sorted(positions), "global, root … closest, then its import"
    assert "PKG-RULE" not in system, "AGENTS.override.md replaces its directory's AGENTS.md"
    assert "### pkg/api/docs/style.md (imported by pkg/api/CLAUDE.md)" in system
    assert "@example.com" in system
    assert "import @example.com" not in system


@pytest.mark.timeout(120)
def test_claude_imports_are_confined_and_cycles_and_misses_are_stated(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo")
    outside = tmp_path / "outside.md"
    outside.write_text("OUTSIDE-SECRET")
    (repo / ".claude").mkdir()
    (repo / ".claude" / "CLAUDE.md").write_text(
        "DOT-CLAUDE: @a.md @../../outside.md @missing.md `@code.md`\n```\n@fenced.md\n```\n"
    )
    (repo / ".claude" / "a.md").write_text("A-TEXT @CLAUDE.md")
    (repo / ".claude" / "code.md").write_text("CODE-SPAN")
    result = run(tmp_path, ["-C", str(repo), "look"], cwd=tmp_path)
    assert result.done.returncode == 0, result.done.stderr[-2000:]
    system = result.system
    assert "DOT-CLAUDE" in system, ".claude/CLAUDE.md stands in for a missing AGENTS.md"
    assert "A-TEXT" in system
    assert "OUTSIDE-SECRET" not in system
    assert "[import @../../outside.md skipped: outside" in system
    assert "[import @missing.md skipped: no such file]" in system
    assert "CODE-SPAN" not in system
    assert "fenced.md" not in system.split("```")[-1]


@pytest.mark.timeout(120)
def test_instructions_over_budget_keep_the_closest_and_say_what_was_cut(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo")
    sub = repo / "sub"
    sub.mkdir()
    (repo / "AGENTS.md").write_text("ROOT-START " + "r" * 40_000)
    (sub / "AGENTS.md").write_text("SUB-RULE: closest wins.")
    result = run(tmp_path, ["look"], cwd=sub)
    assert result.done.returncode == 0, result.done.stderr[-2000:]
    system = result.system
    assert "SUB-RULE: closest wins." in system
    assert "ROOT-START" in system
    assert "[AGENTS.md truncated: showing" in system
    assert "read the file with read_file for the rest]" in system
