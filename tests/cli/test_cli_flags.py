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
