"""The CLI means what it says: global options wherever they stand, the configured model and
limits on the wire, the run's outcome in its exit status and its `--json` result. Each through a
real `yagent` subprocess against the scripted OpenAI-compatible server (`tests.llm.wire`), reading
exactly what the model received."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from tests.cli.test_robustness import configure, tool_reply, yagent
from tests.llm.wire import Reply, WireServer, text_frames
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


# -- the outcome: exit status and the --json result line -----------------------------------------

PRICE = '[llm.prices."m"]\ninput = 1000000.0\noutput = 0.0\n'  # $1 an input token


def _result(stdout: str) -> dict[str, object]:
    last = json.loads(stdout.splitlines()[-1])
    assert last["type"] == "result"
    return dict(last)


def test_a_run_that_submits_nothing_exits_1_and_says_so(tmp_path: Path) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    with WireServer([Reply(events=text_frames("all done")) for _ in range(3)]) as server:
        configure(home, server.url, PRICE)
        done = yagent(["run", "-C", str(ws), "--json", "fix it"], home, ws)
    assert done.returncode == 1, done.stdout + done.stderr
    result = _result(done.stdout)
    assert result["status"] == "answered"
    assert result["is_error"] is True
    assert result["num_turns"] == 3
    assert isinstance(result["duration_ms"], int)
    assert result["duration_ms"] >= 0
    assert result["total_cost_usd"] == pytest.approx(3 * 7.0)  # 7 input tokens a call


def test_a_submitted_run_and_a_chat_answer_exit_0(tmp_path: Path) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    with WireServer([EXIT, Reply(events=text_frames("it is 4"))]) as server:
        configure(home, server.url)
        coding = yagent(["run", "-C", str(ws), "--json", "fix it"], home, ws)
        chat = yagent(["run", "-C", str(ws), "--json", "--agent", "chat", "2+2?"], home, ws)
    for done in (coding, chat):
        assert done.returncode == 0, done.stdout + done.stderr
        result = _result(done.stdout)
        assert result["is_error"] is False
        assert result["num_turns"] == 1
        assert result["total_cost_usd"] is None  # no price for "m": said, never guessed
        assert result["cost_note"]


def test_a_chat_answer_is_shown_without_the_no_submission_warning(tmp_path: Path) -> None:
    """The chat agent answers in plain text by design: its answer is not flagged as a missing
    submission; a coding agent's plain reply still is (and `--json` keeps the note for both)."""
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    replies = [Reply(events=text_frames("it is 4")) for _ in range(8)]
    with WireServer(replies) as server:
        configure(home, server.url)
        chat = yagent(["run", "-C", str(ws), "--agent", "chat", "2+2?"], home, ws)
        coding = yagent(["run", "-C", str(ws), "--max-turns", "1", "fix it"], home, ws)
    assert chat.returncode == 0, chat.stdout + chat.stderr
    assert "it is 4" in chat.stdout
    assert "no deliverable was submitted" not in chat.stdout + chat.stderr
    assert coding.returncode == 1
    assert "no deliverable was submitted" in coding.stdout


# -- CI flags --------------------------------------------------------------------------------------


def test_max_turns_model_and_fail_on_no_submit(tmp_path: Path) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    agent = '[agents.reviewer]\nprompt = "review"\ntools = ["read_file"]\nmodel = "own"\n'
    with WireServer([Reply(events=text_frames("hmm")) for _ in range(8)]) as server:
        configure(home, server.url, agent)
        capped = yagent(["run", "-C", str(ws), "--json", "--max-turns", "2", "go"], home, ws)
        assert len(server.received) == 2, "--max-turns 2: two model calls"
        other = yagent(
            ["run", "-C", str(ws), "--json", "--model", "m2", "--agent", "chat", "q"], home, ws
        )
        strict = ["run", "-C", str(ws), "--json", "--agent", "chat", "--fail-on-no-submit", "q"]
        failed = yagent(strict, home, ws)
        with_own = ["--model", "m2", "--agent", "reviewer", "--max-turns", "1", "q"]
        own = yagent(["run", "-C", str(ws), "--json", *with_own], home, ws)
    assert capped.returncode == 1, capped.stdout + capped.stderr
    assert _result(capped.stdout)["status"] == "max_steps"
    assert _result(capped.stdout)["num_turns"] == 2
    assert other.returncode == 0, other.stdout + other.stderr
    assert failed.returncode == 1
    assert _result(failed.stdout)["is_error"] is True
    assert own.returncode == 1, own.stdout + own.stderr  # one turn, a plain reply: max_steps
    models = [r.body["model"] for r in server.received]
    assert models == ["m", "m", "m2", "m", "own"], "an agent's own model beats --model"


@pytest.mark.parametrize("args", [["--max-turns", "0"], ["--model", ""]], ids=["turns", "model"])
def test_bad_ci_flags_are_usage_errors(tmp_path: Path, args: list[str]) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    with WireServer([]) as server:
        configure(home, server.url)
        done = yagent(["run", "-C", str(ws), *args, "hi"], home, ws)
    assert done.returncode == 2, done.stdout + done.stderr
    assert args[0] in done.stderr
    assert server.received == []


# -- the --json event schema ---------------------------------------------------------------------

SCHEMA = Path(__file__).resolve().parents[2] / "docs" / "events.schema.json"


def test_every_json_line_of_real_runs_matches_the_documented_schema(tmp_path: Path) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    (ws / "a.txt").write_text("hello\n")
    replies = [
        tool_reply("c1", "read_file", {"path": "a.txt"}),
        tool_reply("c2", "run_bash", {"command": "echo hi"}),
        tool_reply("c3", "no_such_tool", {}),
        Reply(events=text_frames("thinking")),
        EXIT,
        Reply(events=text_frames("hmm")),
        Reply(events=text_frames("hmm")),
    ]
    with WireServer(replies) as server:
        configure(home, server.url, PRICE)
        runs = [
            yagent(["run", "-C", str(ws), "-y", "--json", "work"], home, ws),
            yagent(["run", "-C", str(ws), "--json", "--max-turns", "2", "more"], home, ws),
        ]
    validator = jsonschema.Draft202012Validator(json.loads(SCHEMA.read_text()))
    seen: set[str] = set()
    for run in runs:
        lines = [json.loads(line) for line in run.stdout.splitlines()]
        assert lines[0] == {"type": "schema", "version": 1, "schema": "docs/events.schema.json"}
        assert lines[-1]["type"] == "result"
        for line in lines:
            errors = [e.message for e in validator.iter_errors(line)]
            assert not errors, (line, errors)
            seen.add(line["type"])
    assert {"tool_call", "tool_result", "assistant_turn", "reminder", "run_end"} <= seen
    broken = {"type": "result", "session_id": "s", "status": "answered"}
    assert list(validator.iter_errors(broken)), "a result line without its fields is refused"
    assert list(validator.iter_errors({"type": "renamed_event", "delegation_id": ""}))
