"""agents.imported: a Claude Code agent file as a yagent agent — tools mapped, model chosen."""

from __future__ import annotations

from pathlib import Path

import pytest

from yagent.agents.agentfiles import AgentFile, find
from yagent.agents.catalog import AgentConfigError
from yagent.agents.imported import load
from yagent.toolspec.builtin import BUILTIN


def agent_file(tmp_path: Path, front: str, body: str = "Instructions.") -> AgentFile:
    path = tmp_path / "a.md"
    path.write_text(f"---\n{front}---\n{body}\n")
    return AgentFile("a", path, project=False)


def granted(agent: object) -> set[str]:
    return {s.name for s in BUILTIN if agent.profile.grants(s)}  # type: ignore[attr-defined]


def test_model_aliases_mean_the_configured_model_other_ids_are_kept(tmp_path: Path) -> None:
    for model, expected in (("sonnet", ""), ("inherit", ""), ("gpt-review", "gpt-review")):
        agent = load(agent_file(tmp_path, f"name: a\ndescription: d\nmodel: {model}\n"), 0)
        assert agent.model == expected
    assert load(agent_file(tmp_path, "name: a\ndescription: d\n"), 0).model == ""


def test_tools_are_mapped_and_absent_tools_mean_the_coding_agents(tmp_path: Path) -> None:
    agent = load(agent_file(tmp_path, "name: a\ndescription: d\ntools: Read, Bash\n"), 0)
    tools = granted(agent)
    assert {"read_file", "run_bash", "list_jobs", "stop_job", "agent_exit"} <= tools
    assert "write_file" not in tools
    everything = granted(load(agent_file(tmp_path, "name: a\ndescription: d\n"), 0))
    assert {"write_file", "run_bash", "search"} <= everything


@pytest.mark.parametrize(
    ("front", "message"),
    [
        ("name: a\ndescription: d\ntools: Bash(git:*)\n", "take no pattern"),
        ("name: a\ndescription: d\ntools: WebSearch\n", "no web search"),
        ("name: A B\ndescription: d\n", "'name' must be"),
        ("name: a\n", "needs a 'description'"),
        ("name: a\ndescription: d\nmodel: [x]\n", "'model' must be text"),
    ],
)
def test_broken_files_are_refused_naming_the_file(tmp_path: Path, front: str, message: str) -> None:
    with pytest.raises(AgentConfigError, match=message) as info:
        load(agent_file(tmp_path, front), 0)
    assert "a.md" in str(info.value)


def test_the_projects_file_wins_and_a_broken_one_is_still_listed(tmp_path: Path) -> None:
    ws, user = tmp_path / "ws", tmp_path / "user"
    (ws / ".claude" / "agents").mkdir(parents=True)
    (user / ".claude" / "agents").mkdir(parents=True)
    (ws / ".claude" / "agents" / "r.md").write_text("---\nname: rev\ndescription: p\n---\nx")
    (user / ".claude" / "agents" / "r.md").write_text("---\nname: rev\ndescription: u\n---\nx")
    (user / ".claude" / "agents" / "broken.md").write_text("no front matter")
    found = find(ws, user)
    assert found["rev"].project
    assert "broken" in found
    with pytest.raises(AgentConfigError, match="front matter"):
        load(found["broken"], 0)
