"""Slash commands typed into the interactive session in a real pty: every command answers on the
screen, an unknown one suggests the nearest and reaches no model, `/clear` starts a new session
and `/resume` goes back, `/quit` ends with the summary."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.ptyterm import Term, configure
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
