"""A plain answer in the interactive terminal (a real pty): the chat agent answers in plain text
by design, so its answer is shown without the yellow "no deliverable was submitted" line; a
coding agent's plain reply is still flagged (one-shot `yagent run`: tests/cli/test_cli_flags.py).
"""

from __future__ import annotations

from pathlib import Path

from tests.cli.ptyterm import CTRL_D, Term, configure
from tests.llm.wire import Reply, WireServer, text_frames

WARNING = "no deliverable was submitted"


def _turn(tmp_path: Path, args: tuple[str, ...]) -> str:
    """What one interactive turn answered in plain text showed, from the task to the prompt."""
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    replies = [Reply(events=text_frames("it is 4")) for _ in range(12)]
    with WireServer(replies) as server:
        configure(home, server.url)
        term = Term(home, ws, args)
        try:
            term.ready()
            term.line("2+2?")
            shown = term.wait_for(" steps · ")  # the turn's closing status line
            shown += term.wait_for("\nyagent>")
            term.send(CTRL_D)
            assert term.finish() == 0
        finally:
            term.close()
    return shown


def test_a_chat_answer_is_shown_without_the_no_submission_warning(tmp_path: Path) -> None:
    shown = _turn(tmp_path, ("--agent", "chat"))
    assert "it is 4" in shown
    assert "answered" in shown
    assert WARNING not in shown


def test_a_coding_agents_plain_reply_still_shows_the_warning(tmp_path: Path) -> None:
    shown = _turn(tmp_path, ())
    assert "it is 4" in shown
    assert WARNING in shown
