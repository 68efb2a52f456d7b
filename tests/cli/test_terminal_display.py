"""The interactive terminal under the conditions people have: `NO_COLOR` at 60 columns, a dumb
terminal, `--plain` for screen readers, a terminal whose encoding is not UTF-8 — each in a real
pty, reading what reaches the screen. Also the status bar and a second Ctrl-C within 2 s."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.ptyterm import CTRL_C, CTRL_D, Term, configure, plain
from tests.cli.test_robustness import tool_reply
from tests.llm.wire import Reply, WireServer, text_frames

COLOUR = re.compile(r"\x1b\[[0-9;]*(3[0-9]|4[0-9]|9[0-7]|38;5;|38;2;)[0-9;]*m")
LONG = "a-very-long-directory-name/" * 4 + "file.txt"


@pytest.fixture
def server() -> Iterator[WireServer]:
    replies = [tool_reply("c1", "read_file", {"path": LONG})]
    replies += [Reply(events=text_frames("**all** done")) for _ in range(6)]
    with WireServer(replies) as srv:
        yield srv


def session(tmp_path: Path, server: WireServer, *args: str, cols: int = 60, **env: str) -> Term:
    home = tmp_path / "home"
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    configure(home, server.url)
    term = Term(home, ws, tuple(args), cols=cols, env=env)
    term.ready()
    term.line("read it")
    term.wait_for("done\n")
    term.wait_for("yagent>")
    term.send(CTRL_D)
    assert term.finish() == 0
    return term


def test_no_color_at_60_columns(tmp_path: Path, server: WireServer) -> None:
    term = session(tmp_path, server, NO_COLOR="1")
    assert not COLOUR.search(term.raw), repr(COLOUR.search(term.raw))
    [call] = [line for line in term.text.splitlines() if line.startswith("● read_file")]
    assert len(call) <= 60  # the key argument is cut to the width, with a visible "…"
    assert call.endswith("…")
    assert "failed" in term.text or "✗ read_file" in term.text  # the missing file: said


def test_plain_for_screen_readers(tmp_path: Path, server: WireServer) -> None:
    term = session(tmp_path, server, "--plain")
    assert not COLOUR.search(term.raw)
    assert "* read_file" in term.text
    assert "FAILED read_file" in term.text
    assert "**all** done" in term.text  # Markdown left as the text it is
    assert "ctx" not in term.text  # no status bar


def test_a_dumb_terminal(tmp_path: Path, server: WireServer) -> None:
    term = session(tmp_path, server, TERM="dumb")
    assert not COLOUR.search(term.raw)
    assert "* read_file" in term.text


def test_a_terminal_that_is_not_utf8(tmp_path: Path, server: WireServer) -> None:
    term = session(tmp_path, server, PYTHONIOENCODING="latin-1", LC_ALL="C", LANG="C")
    assert "* read_file" in term.text  # ASCII marks
    assert "all" in term.text


def test_the_status_bar_names_agent_model_context_cost_jobs_and_sandbox(
    tmp_path: Path, server: WireServer
) -> None:
    term = session(tmp_path, server, cols=120)
    bar = plain(term.raw)
    assert "coding · m · ctx — · 0 in / 0 out tok $0.0000 · jobs 0 · sandbox workspace-write" in bar
    # after the turn: the context measured, the tokens counted, the cost unknown (unpriced "m")
    assert re.search(r"coding · m · ctx \d+% · 21 in / 12 out tok \$\? · jobs 0 · sandbox", bar)


def test_a_second_ctrl_c_within_two_seconds_kills_the_command(tmp_path: Path) -> None:
    replies = [tool_reply("c1", "run_bash", {"command": "touch started; sleep 60"})]
    with WireServer(replies) as server:
        home = tmp_path / "home"
        ws = tmp_path / "ws"
        ws.mkdir()
        configure(home, server.url, "[agent]\ndrain_budget = 50\n")
        term = Term(home, ws, ("-y",))
        try:
            term.ready()
            term.line("wait")
            term.wait_for("● run_bash touch started; sleep 60")
            term.wait_for_file(ws / "started")  # the command runs (not only announced)
            term.send(CTRL_C)
            term.wait_for(
                "Ctrl-C again within 2s kills its running commands"
            )  # the first was taken
            term.send(CTRL_C)
            term.wait_for("live process group(s); exiting")
            assert term.finish() == 130
        finally:
            term.close()
