"""The prompt drawn before the app loads (`yagent.cli.early`), in a real pty: keys typed at once
after the spawn all reach the submitted task; Ctrl-C and Ctrl-D typed early keep their meaning;
a workspace waiting for trust, `--plain`, `NO_COLOR`, `TERM=dumb`, a narrow terminal and input
that is not a terminal get no early prompt (what the app says comes first); a configuration
error is said on its own line with the terminal restored and the keys typed for yagent discarded
(they never reach the shell); SIGTERM before the session took the prompt restores the terminal
and exits 143."""

from __future__ import annotations

import json
import os
import signal
import sys
import termios
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.ptyterm import CTRL_C, CTRL_D, ENTER, Term, configure
from tests.llm.wire import Reply, WireServer, text_frames
from yagent.cli import early, repl

BANNER_END = "Ctrl-D quits"


@pytest.fixture
def server() -> Iterator[WireServer]:
    with WireServer([Reply(events=text_frames("all done")) for _ in range(8)]) as srv:
        yield srv


def user_texts(server: WireServer) -> list[str]:
    return [
        m["content"]
        for r in server.received
        for m in r.body["messages"]
        if m["role"] == "user" and isinstance(m["content"], str)
    ]


def _setup(tmp_path: Path, server: WireServer, extra: str = "") -> tuple[Path, Path]:
    home, ws = tmp_path / "home", tmp_path / "ws"
    configure(home, server.url, extra)
    ws.mkdir()
    return home, ws


def _echoes(term: Term, now: bool = False) -> bool:
    """Whether yagent left the terminal in its line mode (echo, line by line, signal keys):
    once it ended, or (`now`) as the terminal is at this moment."""
    mode = termios.tcgetattr(term.child.child_fd) if now else term.mode_at_exit
    assert mode is not None
    lflag = mode[3]
    wanted = termios.ECHO | termios.ICANON | termios.ISIG
    return lflag & wanted == wanted


def test_the_prompt_comes_before_the_app_and_every_early_key_reaches_the_task(
    tmp_path: Path, server: WireServer
) -> None:
    home, ws = _setup(tmp_path, server)
    term = Term(home, ws)
    try:
        term.send("fix the ")  # before yagent could start: the terminal echoes it, yagent reads it
        assert term.wait_for(repl.PROMPT) in ("", "fix the ")  # the prompt, over that echo
        term.send("ünïcode bug in main.py" + ENTER)  # at once: the app is loading
        loading = term.wait_for(BANNER_END)
        assert "bug" not in loading  # not echoed while the app loads: shown once, later
        term.wait_for("all done")
        term.wait_for("\nyagent>")
        assert user_texts(server)[0] == "fix the ünïcode bug in main.py"
        term.send(CTRL_D)
        assert term.finish() == 0
        assert _echoes(term)
    finally:
        term.close()


def test_ctrl_c_typed_early_clears_the_line_and_ctrl_d_quits(
    tmp_path: Path, server: WireServer
) -> None:
    home, ws = _setup(tmp_path, server)
    term = Term(home, ws)
    try:
        term.wait_for(repl.PROMPT)
        term.send("a mistake" + CTRL_C + "the real task" + ENTER)
        term.wait_for("all done")
        assert user_texts(server)[0] == "the real task"
        assert not any("mistake" in text for text in user_texts(server))
        term.wait_for("\nyagent>")
        term.send(CTRL_D)
        assert term.finish() == 0
    finally:
        term.close()
    quitter = Term(home, ws)
    try:
        quitter.wait_for(repl.PROMPT)
        quitter.send(CTRL_D)  # before the app is ready: quits, as at the prompt
        quitter.wait_for("no task was run")
        assert quitter.finish() == 0
        assert _echoes(quitter)
    finally:
        quitter.close()


def test_a_workspace_waiting_for_trust_says_so_before_any_prompt(
    tmp_path: Path, server: WireServer
) -> None:
    home, ws = _setup(tmp_path, server)
    (ws / ".yagent").mkdir()
    (ws / ".yagent" / "config.toml").write_text('[agent]\npreset = "yolo"\n')
    term = Term(home, ws)
    try:
        before = term.wait_for("yagent>")
        assert "project settings not applied" in before  # said first: no prompt ahead of it
        assert BANNER_END in before
        term.send("first task" + ENTER)
        term.wait_for("all done")
        assert user_texts(server)[0] == "first task"
        term.wait_for("\nyagent>")
        term.send(CTRL_D)
        assert term.finish() == 0
    finally:
        term.close()


@pytest.mark.parametrize(
    ("args", "env", "cols"),
    [
        ((), {"NO_COLOR": "1"}, 100),
        ((), {"TERM": "dumb"}, 100),
        (("--plain",), {}, 100),
        ((), {}, 15),
    ],
)
def test_plain_no_color_dumb_and_narrow_terminals_get_no_early_prompt(
    tmp_path: Path, server: WireServer, args: tuple[str, ...], env: dict[str, str], cols: int
) -> None:
    home, ws = _setup(tmp_path, server)
    term = Term(home, ws, args, cols=cols, env=env)
    try:
        before = term.wait_for("yagent>")
        assert "yagent in" in before  # the banner first, then prompt-toolkit's prompt
        term.send(CTRL_D)
        assert term.finish() == 0
    finally:
        term.close()


def test_input_that_is_not_a_terminal_is_a_task_run_once_without_a_prompt(
    tmp_path: Path, server: WireServer
) -> None:
    home, ws = _setup(tmp_path, server)
    script = f'printf "piped task" | {sys.executable} -m yagent.cli; echo "status $?"'
    term = Term(home, ws, argv=["sh", "-c", script])
    try:
        shown = term.wait_for("status ")
        assert "all done" in shown
        assert repl.PROMPT not in shown
        assert user_texts(server)[0] == "piped task"
        term.finish()
    finally:
        term.close()


def test_a_config_error_gets_its_own_line_and_the_typed_keys_never_reach_the_shell(
    tmp_path: Path, server: WireServer
) -> None:
    home, ws = _setup(tmp_path, server, "[agent]\nno_such_key = 1\n")
    script = f'{sys.executable} -m yagent.cli; echo "status $?"; read line; echo "shell got: $line"'
    term = Term(home, ws, argv=["sh", "-c", script])
    try:
        term.wait_for(repl.PROMPT)
        term.send("echo pwned" + ENTER)  # meant for yagent's prompt
        shown = term.wait_for("status 2")
        lines = shown.split("\n")
        error = next(line for line in lines if "no_such_key" in line)
        assert error.startswith("yagent: "), shown  # not after the painted prompt
        assert _echoes(term, now=True)  # the shell's `read` has the terminal as yagent left it
        term.send("typed later" + ENTER)
        term.wait_for("shell got: typed later")
        assert "pwned" not in term.text.replace("echo pwned", "")
        term.finish()
    finally:
        term.close()


def test_sigterm_before_the_session_took_the_prompt_restores_the_terminal(
    tmp_path: Path, server: WireServer
) -> None:
    home, ws = _setup(tmp_path, server)
    term = Term(home, ws)
    try:
        term.wait_for(repl.PROMPT.strip())  # painted; the session has not read a key yet
        os.kill(term.child.pid, signal.SIGTERM)
        assert term.finish() == 143
        assert _echoes(term)
    finally:
        term.close()


def test_the_painted_prompt_is_the_sessions_prompt() -> None:
    assert early.PROMPT == repl.PROMPT


@pytest.mark.parametrize(
    ("args", "ok", "workspace"),
    [
        ([], True, None),
        (["-y", "--agent", "chat", "-C", "d"], True, "d"),
        (["--workspace=d", "--allow-local", "8080"], True, "d"),
        (["run", "task"], False, None),
        (["--plain"], False, None),
        (["-C"], False, None),
        (["sessions"], False, None),
    ],
)
def test_only_the_interactive_session_paints(
    args: list[str], ok: bool, workspace: str | None
) -> None:
    assert early.global_options_only(args) == (ok, workspace if ok else None)


def test_the_trust_check_reads_what_app_trust_records(tmp_path: Path) -> None:
    from yagent.app import projectfolders, trust

    ws, home = tmp_path / "ws", tmp_path / "home"
    (ws / ".yagent" / "skills" / "a-b").mkdir(parents=True)
    (ws / ".yagent" / "skills" / "a").mkdir()
    (ws / ".yagent" / "skills" / "a" / "SKILL.md").write_text("one")
    (ws / ".yagent" / "skills" / "a-b" / "SKILL.md").write_text("two")
    (ws / ".claude" / "agents").mkdir(parents=True)
    (ws / ".claude" / "agents" / "x.md").write_text("agent")
    (ws / ".mcp.json").write_text("{}")
    home.mkdir()
    assert not early.waits_for_trust(str(home), str(tmp_path / "empty"))
    assert early.waits_for_trust(str(home), str(ws))  # nothing trusted yet
    digests = {".mcp.json": trust.digest(b"{}"), **projectfolders.digests(ws)}
    assert early.project_digests(str(ws)) == digests
    trust.Store(home).trust(ws, digests)
    assert not early.waits_for_trust(str(home), str(ws))
    (ws / ".claude" / "agents" / "y.md").write_text("another")  # the folder changed
    assert early.waits_for_trust(str(home), str(ws))
    (home / "trust.json").write_text(json.dumps({"version": 1}))  # cannot tell: say it first
    assert early.waits_for_trust(str(home), str(ws))
