"""Interrupting the interactive session, typed into a real pty: Ctrl-C (or Esc) stops the turn at
once and keeps the conversation, the next task continues the same session; Ctrl-D quits with a
one-line summary and how to resume."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.ptyterm import CTRL_C, CTRL_D, ESC, Term, configure
from tests.cli.test_robustness import tool_reply
from tests.llm.wire import Reply, WireServer, text_frames


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    return path


@pytest.fixture
def hanging_then_answers() -> Iterator[WireServer]:
    # "zq\n" is committed at its line break (app.segments), then the stream hangs
    hang = Reply(events=text_frames("zq\nnever finished"), hang_after=2)
    with WireServer([hang] + [Reply(events=text_frames("second answer")) for _ in range(8)]) as s:
        yield s


def user_texts(server: WireServer, request: int) -> list[str]:
    body = server.received[request].body
    return [m["content"] for m in body["messages"] if m["role"] == "user"]


def test_ctrl_c_in_the_first_model_call_stops_at_once_and_the_next_task_continues(
    tmp_path: Path, ws: Path, hanging_then_answers: WireServer
) -> None:
    home = tmp_path / "home"
    configure(home, hanging_then_answers.url)
    term = Term(home, ws)
    try:
        term.ready()
        term.line("first task")
        term.wait_for("zq")  # the model is streaming, then hangs
        term.send(CTRL_C)
        stopped = term.wait_for("yagent>")
        assert "turn stopped" in stopped
        assert "did not stop within" not in stopped
        assert "cancelled: cancelled" not in stopped
        term.line("second task")
        term.wait_for("second answer")
        term.wait_for("yagent>")
        term.send(CTRL_D)
        assert term.finish() == 0
    finally:
        term.close()
    assert "SessionNotFoundError" not in term.text
    texts = user_texts(hanging_then_answers, 1)
    assert any("first task" in t for t in texts), texts  # the same session: the first task kept
    assert any("second task" in t for t in texts), texts


def test_a_turn_force_stopped_in_a_long_command_keeps_its_session(tmp_path: Path, ws: Path) -> None:
    """The drain budget runs out while a command runs: the turn is force-stopped (said once),
    and the next task still continues the session the stopped turn belonged to."""
    home = tmp_path / "home"
    command = "trap '' INT TERM; touch started; sleep 30"
    long_command = tool_reply("c1", "run_bash", {"command": command})
    answers = [Reply(events=text_frames("second answer")) for _ in range(8)]
    with WireServer([long_command, *answers]) as server:
        configure(home, server.url, "[agent]\ndrain_budget = 0.5\n")
        term = Term(home, ws, ("-y",))
        try:
            term.ready()
            term.line("first task")
            term.wait_for("run_bash")
            term.wait_for_file(ws / "started")  # the command runs (not only announced)
            term.send(CTRL_C)
            stopped = term.wait_for("yagent>")
            assert "did not stop within 0.5s and was stopped" in stopped
            assert "turn stopped" in stopped
            term.line("second task")
            term.wait_for("second answer")
            term.wait_for("yagent>")
            term.send(CTRL_D)
            assert term.finish() == 0
        finally:
            term.close()
        texts = user_texts(server, 1)
    assert "SessionNotFoundError" not in term.text
    assert any("first task" in t for t in texts), texts
    assert any("second task" in t for t in texts), texts


def test_esc_stops_the_turn_like_ctrl_c(tmp_path: Path, ws: Path) -> None:
    # "zq\n" is committed at its line break (app.segments), then the stream hangs
    hang = Reply(events=text_frames("zq\nnever finished"), hang_after=2)
    with WireServer([hang] + [Reply(events=text_frames("after esc")) for _ in range(6)]) as server:
        home = tmp_path / "home"
        configure(home, server.url)
        term = Term(home, ws)
        try:
            term.ready()
            term.line("first task")
            term.wait_for("zq")  # streamed, drawn live, then the model hangs
            term.send(ESC)
            stopped = term.wait_for("\nyagent>")
            assert "turn stopped" in stopped
            term.line("again")
            term.wait_for("after esc")
            term.wait_for("yagent>")
            term.send(CTRL_D)
            assert term.finish() == 0
        finally:
            term.close()
