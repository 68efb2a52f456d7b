"""A whole interactive session as the screen shows it — task → tool lines → diff → approval →
finish → Ctrl-D summary — captured from a real terminal emulator (tmux, on a socket in the test's
temp dir, 80×40) and compared with the reviewed capture in `golden/session.txt`.

What varies between runs is masked (temp paths, the port, session ids, durations, context %).
To accept a deliberate change of the screen: `YAGENT_UPDATE_GOLDEN=1 pytest` this file, then
review the diff of `golden/session.txt` like code.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.cli.ptyterm import SRC, configure
from tests.cli.test_robustness import tool_reply
from tests.llm.wire import Reply, WireServer, oa_chunk, openai_frames, text_frames

GOLDEN = Path(__file__).parent / "golden" / "session.txt"
WAIT = 40.0


class Tmux:
    def __init__(self, socket: Path) -> None:
        self.socket = socket

    def __call__(self, *args: str) -> str:
        done = subprocess.run(
            ["tmux", "-S", str(self.socket), *args],
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        )
        return done.stdout

    def screen(self) -> str:
        return self("capture-pane", "-p", "-J", "-S", "-200", "-t", "yagent")

    def wait_for(self, needle: str) -> str:
        deadline = time.monotonic() + WAIT
        while True:
            shown = self.screen()
            if needle in shown:
                return shown
            if time.monotonic() > deadline:
                raise AssertionError(f"{needle!r} never showed; the screen had:\n{shown}")
            time.sleep(0.1)


def masked(screen: str, tmp: Path, url: str) -> str:
    text = screen.replace(str(tmp), "<tmp>").replace(url, "<server>")
    text = re.sub(r"\b01[0-9a-f]{10}\b", "<session>", text)
    text = re.sub(r"\d+\.\d+s\b", "<t>s", text)
    text = re.sub(r"ctx \d+%", "ctx <n>%", text)
    lines = [line.rstrip() for line in text.splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    if lines and lines[-1].startswith("Pane is dead ("):  # tmux's own line once yagent exited
        lines.pop()
        while lines and not lines[-1]:
            lines.pop()
    return "\n".join(lines) + "\n"


def test_a_whole_session_matches_the_reviewed_screen(tmp_path: Path) -> None:
    if shutil.which("tmux") is None:
        pytest.fail("tmux is needed for the screen capture (apt-get install tmux)")
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "hello.py").write_text('def greet():\n    return "helo"\n')
    done = "Fixed the typo in `greet`.\n\n- `hello.py`: *helo* → **hello**\n- build dir cleaned"
    replies = [
        Reply(
            events=text_frames("I will **fix** the greeting.", size=40)[:-2]
            + openai_frames([oa_chunk({}, finish="stop")])[-2:]
        ),
        tool_reply("c1", "read_file", {"path": "hello.py"}),
        tool_reply(
            "c2",
            "search_replace_in_file",
            {"path": "hello.py", "old_string": '"helo"', "new_string": '"hello"'},
        ),
        tool_reply("c3", "run_bash", {"command": "rm -rf build && echo cleaned"}),
        tool_reply("c4", "agent_exit", {"reason": "done", "summary": done}),
    ]
    home = tmp_path / "home"
    tmux = Tmux(tmp_path / "tmux.sock")
    with WireServer(replies) as server:
        configure(home, server.url)
        env = {
            "YAGENT_HOME": str(home),
            "PYTHONPATH": SRC,
            "NO_COLOR": "1",
            "HOME": str(tmp_path),
            "PATH": os.environ["PATH"],
            "LANG": "C.UTF-8",
        }
        command = " ".join(
            [
                "env",
                "-i",
                *(f"{k}={shlex.quote(v)}" for k, v in env.items()),
                shlex.quote(sys.executable),
                "-m",
                "yagent.cli",
            ]
        )
        tmux(
            "-f",
            "/dev/null",
            "new-session",
            "-d",
            "-s",
            "yagent",
            "-x",
            "80",
            "-y",
            "40",
            "-c",
            str(ws),
            command,
        )
        try:
            tmux("set-option", "-t", "yagent", "remain-on-exit", "on")
            tmux.wait_for("yagent>")
            tmux("send-keys", "-t", "yagent", "-l", "fix the greeting")
            tmux("send-keys", "-t", "yagent", "Enter")
            tmux.wait_for("allow?")
            tmux("send-keys", "-t", "yagent", "-l", "y")
            tmux.wait_for("finished ·")
            tmux.wait_for("\nyagent>")
            tmux("send-keys", "-t", "yagent", "C-d")
            screen = tmux.wait_for("resume: yagent resume")
        finally:
            subprocess.run(["tmux", "-S", str(tmux.socket), "kill-server"], timeout=30)
    assert "Traceback" not in screen
    got = masked(screen, tmp_path, server.url)
    if os.environ.get("YAGENT_UPDATE_GOLDEN"):
        GOLDEN.write_text(got)
    assert got == GOLDEN.read_text()
