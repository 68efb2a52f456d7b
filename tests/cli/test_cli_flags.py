"""The CLI means what it says: global options wherever they stand, the configured model and
limits on the wire, the run's outcome in its exit status and its `--json` result. Each through a
real `yagent` subprocess against the scripted OpenAI-compatible server (`tests.llm.wire`), reading
exactly what the model received."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.test_robustness import configure, tool_reply, yagent
from tests.llm.wire import WireServer
from yagent.agents import catalog

EXIT = tool_reply("x", "agent_exit", {"reason": "done", "summary": "ok"})


def _system(server: WireServer, index: int = 0) -> str:
    messages = server.received[index].body["messages"]
    return "\n".join(m["content"] for m in messages if m["role"] == "system")


# -- global options before the subcommand -------------------------------------------------------


def test_global_options_before_run_mean_what_they_mean_after_it(tmp_path: Path) -> None:
    ws, elsewhere, home = tmp_path / "ws", tmp_path / "elsewhere", tmp_path / "home"
    ws.mkdir()
    elsewhere.mkdir()
    replies = [
        tool_reply("c1", "run_bash", {"command": "touch made-here"}),
        tool_reply("c2", "write_file", {"path": str(elsewhere / "outside"), "content": "x"}),
        EXIT,
    ]
    with WireServer(replies) as server:
        configure(home, server.url)
        args = ["-y", "-C", str(ws), "--agent", "devops", "run", "--json", "go"]
        done = yagent(args, home, elsewhere)
    assert done.returncode == 0, done.stdout + done.stderr
    assert catalog.builtin("devops", 0).marker in _system(server)
    assert (ws / "made-here").exists(), done.stdout
    assert not (elsewhere / "made-here").exists()
    assert (elsewhere / "outside").exists(), done.stdout


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["-C", "{a}", "run", "-C", "{b}", "hi"], "-C"),
        (["--agent", "chat", "run", "--agent", "devops", "hi"], "--agent"),
        (["-y", "sessions"], "-y"),
        (["--agent", "chat", "doctor"], "--agent"),
    ],
    ids=["two-workspaces", "two-agents", "yes-for-sessions", "agent-for-doctor"],
)
def test_a_global_option_that_cannot_apply_is_refused(
    tmp_path: Path, args: list[str], said: str
) -> None:
    a, b, home = tmp_path / "a", tmp_path / "b", tmp_path / "home"
    a.mkdir()
    b.mkdir()
    with WireServer([]) as server:
        configure(home, server.url)
        filled = [arg.format(a=a, b=b) for arg in args]
        done = yagent(filled, home, a)
    assert done.returncode == 2, done.stdout + done.stderr
    assert said in done.stderr
    assert server.received == []


def test_workspace_before_a_command_without_one_works_there(tmp_path: Path) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    with WireServer([EXIT]) as server:
        configure(home, server.url)
        run = yagent(["run", "-C", str(ws), "--json", "hi"], home, ws)
        assert run.returncode == 0, run.stderr
        listed = yagent(["-C", str(ws), "sessions"], home, tmp_path)
        elsewhere = yagent(["sessions"], home, tmp_path)
    assert listed.returncode == 0, listed.stderr
    session = json.loads(run.stdout.splitlines()[-1])["session_id"]
    assert session[:8] in listed.stdout
    assert session[:8] not in elsewhere.stdout


# -- the configured model and limits on the wire -------------------------------------------------


def test_an_agents_own_model_and_the_max_tokens_go_out_on_the_wire(tmp_path: Path) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    agent = '[agents.reviewer]\nprompt = "review"\ntools = ["read_file"]\nmodel = "big-model"\n'
    with WireServer([EXIT, EXIT]) as server:
        configure(home, server.url, agent.replace("[agents", "max_tokens = 1234\n[agents", 1))
        own = yagent(["run", "-C", str(ws), "--json", "--agent", "reviewer", "hi"], home, ws)
        default = yagent(["run", "-C", str(ws), "--json", "hi"], home, ws)
    assert own.returncode == 0, own.stdout + own.stderr
    assert default.returncode == 0, default.stdout + default.stderr
    assert [r.body["model"] for r in server.received] == ["big-model", "m"]
    assert [r.body.get("max_tokens") for r in server.received] == [1234, 1234]
    assert '"model": "big-model"' in own.stdout  # the turn says which model answered


def test_an_unknown_tool_in_an_agent_is_a_config_error_naming_the_closest(tmp_path: Path) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    with WireServer([]) as server:
        agent = '[agents.reviewer]\nprompt = "review"\ntools = ["read_fiel", "grep"]\n'
        configure(home, server.url, agent)
        done = yagent(["run", "-C", str(ws), "--json", "--agent", "reviewer", "hi"], home, ws)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "read_fiel" in done.stderr
    assert "did you mean 'read_file'" in done.stderr
    assert server.received == []
