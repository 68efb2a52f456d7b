"""Typing into the interactive prompt in a real pty: multi-line messages (Alt-Enter, a pasted
block), history kept per workspace (Up, Ctrl-R), Tab completion of slash commands and of `@path`
workspace files (whose content goes into the task)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.ptyterm import ALT_ENTER, CTRL_D, CTRL_R, ENTER, TAB, UP, Term, configure
from tests.llm.wire import Reply, WireServer, text_frames


@pytest.fixture
def server() -> Iterator[WireServer]:
    with WireServer([Reply(events=text_frames("all done")) for _ in range(24)]) as srv:
        yield srv


def user_texts(server: WireServer) -> list[str]:
    return [
        m["content"]
        for r in server.received
        for m in r.body["messages"]
        if m["role"] == "user" and isinstance(m["content"], str)
    ]


def start(tmp_path: Path, server: WireServer, ws: Path | None = None) -> Term:
    home = tmp_path / "home"
    configure(home, server.url)
    workspace = ws or tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    term = Term(home, workspace)
    term.ready()
    return term


def quit_(term: Term) -> None:
    term.send("\x15" + CTRL_D)  # Ctrl-U empties the line: Ctrl-D on an empty line quits
    assert term.finish() == 0


def test_alt_enter_and_a_pasted_block_make_one_multi_line_message(
    tmp_path: Path, server: WireServer
) -> None:
    term = start(tmp_path, server)
    try:
        term.send("line one" + ALT_ENTER + "line two")
        term.send(ENTER)
        term.wait_for("all done")
        term.wait_for("yagent>")
        term.send("\x1b[200~pasted a\npasted b\n\x1b[201~")  # bracketed paste
        term.send(ENTER)
        term.wait_for("all done")
        term.wait_for("yagent>")
        quit_(term)
    finally:
        term.close()
    texts = user_texts(server)
    assert "line one\nline two" in texts
    assert any(t.startswith("pasted a\npasted b") for t in texts), texts


def test_history_is_kept_per_workspace_and_searched_with_ctrl_r(
    tmp_path: Path, server: WireServer
) -> None:
    term = start(tmp_path, server)
    try:
        term.line("the remembered task")
        term.wait_for("all done")
        term.wait_for("yagent>")
        quit_(term)
    finally:
        term.close()
    again = start(tmp_path, server)  # the same workspace, a new process
    try:
        again.send(CTRL_R + "remem")
        again.wait_for("I-search backward: remem")
        again.send(ENTER)  # accept the found line
        again.send(ENTER)  # and send it
        again.wait_for("all done")
        again.wait_for("yagent>")
        again.send(UP)
        again.wait_for("the remembered task")
        quit_(again)
    finally:
        again.close()
    assert user_texts(server).count("the remembered task") >= 2
    other = start(tmp_path, server, tmp_path / "elsewhere")  # another workspace: its own history
    try:
        other.send(UP)
        other.send(ENTER)
        other.send(CTRL_D)
        assert other.finish() == 0
    finally:
        other.close()
    assert "the remembered task" not in other.text


def test_tab_completes_commands_and_workspace_files_whose_content_joins_the_task(
    tmp_path: Path, server: WireServer
) -> None:
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "main.py").write_text("print('the file body')\n")
    term = start(tmp_path, server, ws)
    try:
        term.send("/he" + TAB)
        term.wait_for("/help")
        term.send(ENTER)  # close the completion menu on the chosen entry
        term.send(ENTER)
        term.wait_for("walk this workspace's input history")  # /help lists the keys
        term.wait_for("yagent>")
        term.send("explain @src/ma" + TAB)
        term.wait_for("@src/main.py")
        term.send(ENTER)
        term.send(ENTER)
        term.wait_for("all done")
        term.wait_for("yagent>")
        quit_(term)
    finally:
        term.close()
    [task] = [t for t in user_texts(server) if t.startswith("explain")][:1]
    assert '<file path="src/main.py">' in task
    assert "print('the file body')" in task
