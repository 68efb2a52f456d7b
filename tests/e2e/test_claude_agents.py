"""Claude Code's sub-agents (`.claude/agents/*.md`) through the real CLI (issue 16, conventions):
the person's own run at once, a repository's once trusted; tools are mapped to yagent's and what
the model receives shows exactly those; an unknown tool is a clear refusal."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.conventions import git_repo, homes, run

REVIEWER = (
    "---\nname: code-reviewer\ndescription: Reviews a change for bugs.\n"
    "tools: Read, Grep, Glob\nmodel: {model}\n---\nREVIEWER-BODY: look for off-by-one errors.\n"
)


def tool_names(body: dict[str, object]) -> set[str]:
    tools = body.get("tools") or []
    assert isinstance(tools, list)
    return {t["function"]["name"] for t in tools}


@pytest.mark.timeout(120)
def test_your_own_claude_agent_runs_with_its_mapped_tools(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo")
    where = homes(tmp_path)
    folder = where.user / ".claude" / "agents"
    folder.mkdir(parents=True)
    (folder / "reviewer.md").write_text(REVIEWER.format(model="gpt-review"))
    result = run(tmp_path, ["-C", str(repo), "--agent", "code-reviewer", "review"], cwd=tmp_path)
    assert result.done.returncode == 0, result.done.stderr[-2000:]
    first = result.received[0]
    system = result.system
    assert system.startswith("You are yagent's custom agent 'code-reviewer'")
    assert "REVIEWER-BODY" in system
    names = tool_names(first)
    assert {"read_file", "search", "list_dir", "print_dir_tree", "agent_exit"} <= names
    assert not names & {"run_bash", "write_file", "search_replace_in_file"}


@pytest.mark.timeout(150)
def test_a_repositorys_agent_waits_for_trust(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo")
    where = homes(tmp_path)
    (repo / ".claude" / "agents").mkdir(parents=True)
    (repo / ".claude" / "agents" / "reviewer.md").write_text(REVIEWER.format(model="inherit"))
    refused = run(tmp_path, ["-C", str(repo), "--agent", "code-reviewer", "x"], cwd=tmp_path)
    assert refused.done.returncode == 2, refused.done.stderr[-2000:]
    assert "the project's .claude/agents is not trusted" in refused.done.stderr
    assert "Traceback" not in refused.done.stderr
    assert refused.received == [], "nothing was sent to the model"
    env = {**os.environ, "HOME": str(where.user), "YAGENT_HOME": str(where.yagent)}
    trusted = subprocess.run(
        [sys.executable, "-m", "yagent.cli", "trust", "-C", str(repo), "--yes"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert trusted.returncode == 0, trusted.stderr
    assert "agents.code-reviewer" in trusted.stdout
    result = run(tmp_path, ["-C", str(repo), "--agent", "code-reviewer", "x"], cwd=tmp_path)
    assert result.done.returncode == 0, result.done.stderr[-2000:]
    assert "REVIEWER-BODY" in result.system


@pytest.mark.timeout(120)
def test_an_unknown_tool_name_is_refused_with_the_nearest_names(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo")
    where = homes(tmp_path)
    folder = where.user / ".claude" / "agents"
    folder.mkdir(parents=True)
    (folder / "bad.md").write_text("---\nname: bad\ndescription: d\ntools: Read, Grpe\n---\nbody\n")
    result = run(tmp_path, ["-C", str(repo), "--agent", "bad", "x"], cwd=tmp_path)
    assert result.done.returncode == 2, result.done.stderr[-2000:]
    assert "unknown tool 'Grpe'; did you mean Grep" in result.done.stderr
    assert "bad.md" in result.done.stderr
    assert "Traceback" not in result.done.stderr
    assert result.received == []


@pytest.mark.timeout(120)
def test_an_unknown_agent_is_one_line_naming_every_place_agents_come_from(tmp_path: Path) -> None:
    repo = git_repo(tmp_path / "repo")
    where = homes(tmp_path)
    (where.user / ".claude" / "agents").mkdir(parents=True)
    (where.user / ".claude" / "agents" / "r.md").write_text(REVIEWER.format(model="inherit"))
    result = run(tmp_path, ["-C", str(repo), "--agent", "nope", "x"], cwd=tmp_path)
    assert result.done.returncode == 2
    assert "unknown agent 'nope'" in result.done.stderr
    assert "from .claude/agents: code-reviewer" in result.done.stderr
    assert "Traceback" not in result.done.stderr
