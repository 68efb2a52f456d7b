"""Streamed text in a real pty: the stable prefix of an unfinished line is shown while the model
is still streaming it (the scripted server hangs mid-line: a rendezvous, not a timer), and
personal data cut across deltas never reaches the screen unmasked."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.ptyterm import CTRL_C, CTRL_D, Term, configure
from tests.llm.wire import Reply, WireServer, text_frames

HALF = "Here is the first half of a li"
PERSONAL = "mail someone@example.com or call 138 1234 5678"
MASK = '[pii]\ndisplay = "mask"\n'


def test_half_a_line_is_shown_while_the_stream_hangs(tmp_path: Path) -> None:
    frames = text_frames(HALF + "ne that never ends")
    hang = Reply(events=frames, hang_after=1 + len(HALF) // 3)  # the role frame, then HALF
    with WireServer([hang, *[Reply(events=text_frames("ok")) for _ in range(4)]]) as server:
        home, ws = tmp_path / "home", tmp_path / "ws"
        ws.mkdir()
        configure(home, server.url)
        term = Term(home, ws)
        try:
            term.ready()
            term.line("go")
            term.wait_for("Here is the first half of a")  # while the server hangs
            assert "never ends" not in term.text
            term.send(CTRL_C)
            term.wait_for("turn stopped")
            term.wait_for("yagent>")
            term.send(CTRL_D)
            assert term.finish() == 0
        finally:
            term.close()


@pytest.mark.parametrize("size", [2, 3, 5])
def test_personal_data_split_across_deltas_is_never_shown_unmasked(
    tmp_path: Path, size: int
) -> None:
    """The stream hangs right after a phone number (cut across deltas, its groups separated by
    spaces): the words before it are shown at once, the number is held — a part of it on its own
    screens clean — and shown masked when the stopped turn flushes it."""
    frames = text_frames(PERSONAL, size=size)
    hang = Reply(events=frames, hang_after=1 + -(-len(PERSONAL) // size))
    with WireServer([hang, *[Reply(events=text_frames("x")) for _ in range(4)]]) as server:
        home, ws = tmp_path / "home", tmp_path / "ws"
        ws.mkdir()
        configure(home, server.url, MASK)
        term = Term(home, ws, ("--plain",))
        try:
            term.ready()
            term.line("who")
            term.wait_for("mail [EMAIL] or call")  # shown while the server hangs
            term.send(CTRL_C)
            term.wait_for("turn stopped")
            term.wait_for("yagent>")
            term.send(CTRL_D)
            assert term.finish() == 0
        finally:
            term.close()
    after = term.text.split("who", 1)[1]
    assert "[EMAIL] or call [MOBILE]" in after.replace("\n", ""), after
    for part in ("138", "1234", "5678", "someone@", "example.com"):
        assert part not in after, (part, after)


MARKDOWN = "## Plan\n\n- first step\n- second **bold** step\n\n```python\nprint('hi')\nx = 1\n```\n"


def test_markdown_is_rendered_while_it_streams(tmp_path: Path) -> None:
    """Heading, list and code block drawn as Markdown — the code block while its fence is still
    open (the stream hangs inside it)."""
    cut = MARKDOWN.index("x = 1")
    hang = Reply(events=text_frames(MARKDOWN, size=4), hang_after=1 + -(-cut // 4))
    with WireServer([hang, *[Reply(events=text_frames("ok")) for _ in range(4)]]) as server:
        home, ws = tmp_path / "home", tmp_path / "ws"
        ws.mkdir()
        configure(home, server.url)
        term = Term(home, ws)
        try:
            term.ready()
            term.line("plan")
            term.wait_for("print('hi')")  # inside the open fence, while the server hangs
            shown = term.text.split("plan", 1)[1]
            assert "Plan" in shown
            assert "## Plan" not in shown  # a heading, not its markup
            assert "• first step" in shown
            assert "second bold step" in shown  # bold, not asterisks
            assert "```" not in shown  # a code block, not its fence
            term.send(CTRL_C)
            term.wait_for("turn stopped")
            term.wait_for("yagent>")
            term.send(CTRL_D)
            assert term.finish() == 0
        finally:
            term.close()
