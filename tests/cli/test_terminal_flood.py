"""The interactive terminal under a flood, in a real pty: one turn of 3 000 `think` calls against
the scripted OpenAI-compatible server. The display's bounded queue may drop events — never
silently: a line says how many `tool_result` events were not shown, and the session goes on."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.cli.ptyterm import CTRL_D, Term, configure, plain
from tests.e2e.test_providers import openai_reply
from tests.llm.wire import Reply, WireServer, text_frames
from yagent.llm.scripted import calls

CALLS = 3000


def test_a_flood_in_the_terminal_says_what_it_did_not_show(tmp_path: Path) -> None:
    items = [("think", json.dumps({"thought": f"t{i}"}), f"c{i}") for i in range(CALLS)]
    replies = [openai_reply(calls(items))]
    replies += [Reply(events=text_frames("flood over")) for _ in range(3)]
    with WireServer(replies) as server:
        home, ws = tmp_path / "home", tmp_path / "ws"
        ws.mkdir()
        configure(home, server.url)
        term = Term(home, ws, ("--plain",), cols=200)
        term.ready()
        term.line("go")
        term.wait_for("flood over")
        term.wait_for("yagent>")
        term.send(CTRL_D)
        assert term.finish() == 0
    said = re.findall(r"display fell behind: not shown here: (.*) event", plain(term.raw))
    assert said, plain(term.raw)[-2000:]
    assert any(re.search(r"\d+ tool_result\b", line) for line in said)
