"""A real `yagent` in a real pseudo-terminal, for the terminal-experience tests.

`Term` spawns `python -m yagent.cli ARGS` (these sources first on the path) in a pty of the size
asked for, with `YAGENT_HOME` in the test's temp dir and the provider pointed at a scripted
OpenAI-compatible server on loopback (`configure`). It keeps everything the program wrote, and
`wait_for(text)` reads until `text` appears in the screen text — the output with its escape
sequences removed — or fails with what was seen so far. Waits are bounded (`WAIT` seconds); they
wait for an effect, never assert a duration.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import termios
import time
from pathlib import Path
from typing import Any

import pexpect

import yagent as yagent_package

SRC = str(Path(yagent_package.__file__).resolve().parents[1])
ENV_DROP = ("YAGENT_PROVIDER", "YAGENT_MODEL", "YAGENT_BASE_URL", "OPENAI_API_KEY", "NO_COLOR")
WAIT = 40.0
_ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)|\x1b[@-Z\\-_=>]")

# keys as a terminal sends them
ENTER = "\r"
ALT_ENTER = "\x1b\r"
CTRL_C = "\x03"
CTRL_D = "\x04"
CTRL_R = "\x12"
ESC = "\x1b"
TAB = "\t"
UP = "\x1b[A"
BANNER_END = "Ctrl-D quits"  # the end of the session's first line, shown once the app is open
CPR_QUERY = "\x1b[6n"  # prompt-toolkit asks where the cursor is (to size the status bar)


def configure(home: Path, url: str, extra: str = "") -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(
        f'[llm]\nprovider = "openai"\nmodel = "m"\nbase_url = "{url}/v1"\nstep_retries = 0\n'
        + extra
    )


def plain(text: str) -> str:
    """`text` without terminal escape sequences and carriage returns."""
    return _ESCAPES.sub("", text).replace("\r", "")


class Term:
    def __init__(
        self,
        home: Path,
        cwd: Path,
        args: tuple[str, ...] = (),
        *,
        cols: int = 100,
        rows: int = 40,
        env: dict[str, str] | None = None,
        argv: list[str] | None = None,
    ) -> None:
        base = {k: v for k, v in os.environ.items() if k not in ENV_DROP}
        base.update(
            YAGENT_HOME=str(home),
            PYTHONPATH=os.pathsep.join([SRC, base.get("PYTHONPATH", "")]),
            TERM="xterm-256color",
            COLUMNS=str(cols),
            LINES=str(rows),
        )
        base.update(env or {})
        command = argv or [sys.executable, "-m", "yagent.cli", *args]  # argv: a shell around it
        self.child = pexpect.spawn(
            command[0],
            command[1:],
            cwd=str(cwd),
            env=base,
            dimensions=(rows, cols),
            encoding="utf-8",
            codec_errors="replace",
            timeout=WAIT,
        )
        self.raw = ""
        self.mode_at_exit: list[Any] | None = None  # the terminal's mode once yagent ended
        self._seen = 0  # where the next wait_for starts looking

    def ready(self) -> str:
        """Wait for the session's own prompt, drawn once the app is open (after the banner) —
        not the one painted before the app loads (`yagent.cli.early`); what showed before it."""
        shown = self.wait_for(BANNER_END)
        return shown + BANNER_END + self.wait_for("yagent>")

    def send(self, keys: str) -> None:
        self.child.send(keys)

    def line(self, text: str) -> None:
        self.child.send(text + ENTER)

    def answer(self, text: str) -> str:
        """Send `text` as a line; what was shown until the next prompt (at a line's start: the
        prompt's own redraw of the sent line is not it)."""
        self.line(text)
        return self.wait_for("\nyagent>")

    @property
    def text(self) -> str:
        return plain(self.raw)

    def _read(self) -> bool:
        try:
            chunk = self.child.read_nonblocking(65536, timeout=0.2)
        except pexpect.TIMEOUT:
            return True
        except pexpect.EOF:
            return False
        self.raw += chunk
        for _ in range(chunk.count(CPR_QUERY)):  # answered as a terminal does: top row
            self.child.send("\x1b[1;1R")
        return True

    def wait_for(self, needle: str, *, wait: float = WAIT) -> str:
        """Read until `needle` shows after what earlier waits consumed; the text between."""
        deadline = time.monotonic() + wait
        while True:
            screen = self.text
            at = screen.find(needle, self._seen)
            if at >= 0:
                since, self._seen = self._seen, at + len(needle)
                return screen[since:at]
            alive = self._read()
            if not alive and needle not in self.text[self._seen :]:
                raise AssertionError(f"yagent ended before {needle!r}; it showed:\n{self.text}")
            if time.monotonic() > deadline:
                raise AssertionError(f"{needle!r} never showed; the screen had:\n{self.text}")

    def wait_for_file(self, path: Path, *, wait: float = WAIT) -> None:
        """Read the screen until `path` exists (a command's sign that it runs): what is shown
        says a tool call was made, not that its command has started."""
        deadline = time.monotonic() + wait
        while not path.exists():
            if not self._read():
                raise AssertionError(f"yagent ended before {path.name} existed:\n{self.text}")
            if time.monotonic() > deadline:
                raise AssertionError(f"{path.name} never appeared; the screen had:\n{self.text}")

    def finish(self, *, wait: float = WAIT) -> int:
        """Read to the end; the exit status."""
        deadline = time.monotonic() + wait
        while self._read():
            if time.monotonic() > deadline:
                self.child.kill(9)
                raise AssertionError(f"yagent did not exit; the screen had:\n{self.text}")
        with contextlib.suppress(termios.error):
            self.mode_at_exit = termios.tcgetattr(self.child.child_fd)
        self.child.close()
        assert "Traceback" not in self.text, self.text
        return int(self.child.exitstatus if self.child.exitstatus is not None else -1)

    def close(self) -> None:
        if self.child.isalive():
            self.child.kill(9)
        self.child.close(force=True)
