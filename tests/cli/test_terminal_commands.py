"""Slash commands typed into the interactive session in a real pty: every command answers on the
screen, an unknown one suggests the nearest and reaches no model, `/clear` starts a new session
and `/resume` goes back, `/quit` ends with the summary; a command given words it does not take
(`/undo 2`, `/last all`) says what it takes and does nothing, and `/resume` of an unknown
session names what lists them (as `yagent resume nope` does)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.ptyterm import CTRL_D, Term, configure
from tests.cli.test_robustness import tool_reply
from tests.llm.wire import Reply, WireServer, text_frames


@pytest.fixture
def server() -> Iterator[WireServer]:
    with WireServer([Reply(events=text_frames("all done")) for _ in range(30)]) as srv:
        yield srv


def first_user_texts(server: WireServer, request: int) -> list[str]:
    body = server.received[request].body
    return [m["content"] for m in body["messages"] if m["role"] == "user"]


def test_every_slash_command_answers(tmp_path: Path, server: WireServer) -> None:
    home = tmp_path / "home"
    ws = tmp_path / "ws"
    ws.mkdir()
    configure(home, server.url)
    term = Term(home, ws)
    try:
        term.ready()
        term.line("/hepl")
        term.wait_for("unknown command /hepl")
        term.wait_for("did you mean /help")
        assert not server.received  # a command never reaches the model
        for command, answer in (
            ("/cost", "session: 0 in / 0 out tokens"),
            ("/context", "no model request measured yet"),
            ("/diff", "no session yet"),
            ("/undo", "nothing to undo"),
            ("/jobs", "no background jobs"),
            ("/memory", "project: no memories"),
            ("/trust", "no project files here"),
            ("/sessions", "no sessions here yet"),
            ("/model", "model m (openai)"),
            ("/agent", "agent coding; known: coding, chat"),
            ("/agent nope", "unknown agent nope"),
            ("/last", "no tool results in the last turn"),
            ("/compact", "nothing to compact"),
        ):
            term.line(command)
            term.wait_for(answer)
            term.wait_for("yagent>")
        term.line("the first task")
        term.wait_for("all done")
        term.wait_for("yagent>")
        requests_after_first = len(server.received)
        term.line("/cost")
        term.wait_for("session: 21 in / 12 out tokens")  # 3 requests × the server's usage
        term.wait_for("cost unknown (unpriced steps)")  # model "m" has no price: said so
        term.line("/context")
        term.wait_for("context: ~")
        term.wait_for("system: ~")
        term.line("/sessions")
        term.wait_for("* ")  # the current one is marked
        term.line("/compact")
        term.wait_for("not compacted")  # too short a history: said, with the reason
        term.line("/agent chat")
        term.wait_for("agent is now chat")
        term.line("/model other-model")
        term.wait_for("model is now other-model")
        term.line("/clear")
        term.wait_for("new session")
        term.line("a fresh start")
        term.wait_for("all done")
        term.wait_for("yagent>")
        fresh = first_user_texts(server, requests_after_first)
        assert not any("the first task" in t for t in fresh), fresh
        assert server.received[requests_after_first].body["model"] == "other-model"
        term.line("/resume")
        term.wait_for("resumed ")
        term.line("/quit")
        term.wait_for("resume: yagent resume ")
        assert term.finish() == 0
    finally:
        term.close()


def test_words_a_command_does_not_take_are_refused_and_an_unknown_session_is_hinted(
    tmp_path: Path,
) -> None:
    home, ws = tmp_path / "home", tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("one\n")
    replies = [
        tool_reply("c1", "write_file", {"path": "a.txt", "content": "two\n"}),
        tool_reply("c2", "agent_exit", {"reason": "done", "summary": "Changed it."}),
    ]
    with WireServer(replies) as server:
        configure(home, server.url)
        term = Term(home, ws, ("-y",))
        try:
            term.ready()
            term.line("change a")
            term.wait_for("✓ write_file")
            term.wait_for("yagent>")
            said = term.answer("/undo 2")
            assert "/undo takes no words: `/undo` alone — revert the last turn's" in said, said
            assert (ws / "a.txt").read_text() == "two\n"  # nothing was undone
            said = term.answer("/last all")
            assert "/last takes no words: `/last` alone — the last turn's tool results" in said
            assert '"content": "two' not in said  # the results were not shown
            said = term.answer("/resume nope")
            assert "no session 'nope'" in said, said
            assert "/sessions lists this workspace's" in said, said
            assert "`yagent sessions --all` every one" in said, said
            assert "restored a.txt" in term.answer("/undo")
            assert (ws / "a.txt").read_text() == "one\n"
            assert len(server.received) == 2  # no command reached the model
            term.send(CTRL_D)
            assert term.finish() == 0
        finally:
            term.close()
