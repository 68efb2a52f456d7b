"""The interactive prompt drawn before the app is imported: `yagent` on a terminal shows
`yagent> ` at once, and the app (a second or so of imports and opening) loads while the person
types.

Contract:
- `wanted(args)` says whether to paint early: only for the interactive session (`args` hold
  global options only — no command, no task, no `--help`/`--version`, no `--plain`), with standard
  input and output both terminals, `TERM` set and not `dumb`, `NO_COLOR` unset, a terminal at
  least `MIN_COLUMNS` wide, and a workspace with no project file or folder waiting for trust
  (`waits_for_trust`: whatever the app would say about the project is said before any prompt).
  Deciding costs the standard library only: nothing of the app is imported here.
- `paint()` (a context manager) takes the terminal: it saves standard input's mode and switches
  it to the mode prompt-toolkit's own prompt uses (no echo, not line by line, no signal keys, a
  typed Enter kept as Enter) with TCSANOW — never a flushing change, so keys already typed stay
  in the terminal's input queue — then writes the prompt. Keys typed from then on are neither
  shown nor read: they wait in the queue, and the first prompt-toolkit prompt reads every one of
  them (its own redraw shows them). Ctrl-C and Ctrl-D typed early are keys like the others and
  mean at that prompt what they always mean there (clear the line; quit on an empty line).
- The painted line is erased by the first thing written to standard output or error after it
  (the app's first line, or an error), so that begins on a line of its own.
- `release()` (called by the interactive session once its first prompt returned) gives the
  terminal back its saved mode. Leaving `paint()` restores it in any case; if the session never
  took the prompt (a configuration error, a crash) the keys typed for it are discarded, so text
  meant for yagent never reaches the shell. SIGTERM before the release restores the terminal
  and ends the command with status 143.
Left to the session (`cli.repl`): calling `release()`; to prompt-toolkit: drawing the real prompt.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import termios
from collections.abc import Iterator
from types import FrameType
from typing import Any, TextIO, cast

PROMPT = "yagent> "  # the session's prompt (`cli.repl.PROMPT`, kept equal by a test)
MIN_COLUMNS = 20  # narrower: prompt-toolkit draws its own prompt, wrapped as it needs
ERASE = "\r\x1b[K"
_FLAGS = frozenset({"-y", "-Y"})
_VALUED = frozenset({"-C", "--workspace", "--agent", "--allow-local"})

# The workspace's own files and folders that wait for the person's trust (`app.trust`,
# `app.projectfolders`: the same names and the same digests).
PROJECT_FILES = (
    ".yagent/config.toml",
    ".yagent/shell-rules.toml",
    ".claude/settings.json",
    ".mcp.json",
)
PROJECT_FOLDERS = {
    ".claude/agents": "*.md",
    ".claude/skills": "*/SKILL.md",
    ".yagent/skills": "*/SKILL.md",
}

_active: Painted | None = None


def global_options_only(args: list[str]) -> tuple[bool, str | None]:
    """Whether `args` are global options only, and the `-C` directory they name."""
    workspace: str | None = None
    at = 0
    while at < len(args):
        arg = args[at]
        name, eq, value = arg.partition("=")
        if arg in _FLAGS:
            at += 1
            continue
        if name in _VALUED and name.startswith("--") and eq:
            at += 1
        elif arg in _VALUED and at + 1 < len(args):
            value = args[at + 1]
            at += 2
        else:
            return False, None
        if name in ("-C", "--workspace"):
            workspace = value
    return True, workspace


def workspace_root(start: str) -> str:
    """The workspace root as `app.workspace.locate` finds it: the nearest folder with `.git`."""
    here = folder = os.path.realpath(start)
    while True:
        if os.path.lexists(os.path.join(folder, ".git")):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return here
        folder = parent


def _folder_files(base: str, pattern: str) -> list[str]:
    """`base`'s files matching `pattern` (`*.md` or `*/SKILL.md`), relative, sorted."""
    if not os.path.isdir(base):
        return []
    names = sorted(os.listdir(base))
    if pattern == "*.md":
        found = [n for n in names if n.endswith(".md")]
    else:
        found = [f"{n}/SKILL.md" for n in names]
    return [n for n in found if os.path.isfile(os.path.join(base, n))]


def _read(path: str) -> bytes:
    with open(path, "rb") as file:
        return file.read()


def project_digests(root: str) -> dict[str, str]:
    """The digests trust is recorded by (`app.trust`, `app.projectfolders`), for the project
    files and folders `root` has."""
    found = [n for n in PROJECT_FILES if os.path.lexists(os.path.join(root, n))]
    folders = {f: _folder_files(os.path.join(root, f), p) for f, p in PROJECT_FOLDERS.items()}
    if not found and not any(folders.values()):
        return {}
    import hashlib  # only for a workspace that has project files

    out: dict[str, str] = {}
    for name in found:
        try:
            out[name] = hashlib.sha256(_read(os.path.join(root, name))).hexdigest()
        except OSError:
            out[name] = ""  # unreadable: the app says why; no early prompt before that
    for folder, files in folders.items():
        if not files:
            continue
        sha = hashlib.sha256()
        for name in files:
            try:
                data = _read(os.path.join(root, folder, name))
            except OSError as exc:
                data = f"unreadable: {exc}".encode()
            sha.update(b"%d:%s%d:" % (len(name.encode()), name.encode(), len(data)))
            sha.update(data)
        out[folder] = sha.hexdigest()
    return out


def waits_for_trust(home: str, root: str) -> bool:
    """True when a project file or folder of `root` is not trusted as it is now — or the trust
    file cannot tell (unreadable, malformed): then the app has something to say first."""
    digests = project_digests(root)
    if not digests:
        return False
    import json

    try:
        data: Any = json.loads(_read(os.path.join(home, "trust.json")))
        records = data["workspaces"].get(os.path.realpath(root), {})
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return True
    return not isinstance(records, dict) or any(records.get(k) != v for k, v in digests.items())


def wanted(args: list[str]) -> bool:
    """Whether `yagent ARGS` paints its prompt early (see the contract)."""
    only_options, workspace = global_options_only(args)
    term = os.environ.get("TERM", "")
    if not only_options or not term or term == "dumb" or os.environ.get("NO_COLOR"):
        return False
    if not (os.isatty(0) and os.isatty(1)):
        return False
    try:
        if os.get_terminal_size(1).columns < MIN_COLUMNS:
            return False
    except OSError:
        return False
    home = os.environ.get("YAGENT_HOME") or os.path.expanduser("~/.yagent")
    try:
        root = workspace_root(workspace or os.getcwd())
    except OSError:
        return False
    return not waits_for_trust(home, root)


class _Erasing:
    """A text stream that erases the painted prompt before its first write."""

    def __init__(self, stream: TextIO, painted: Painted) -> None:
        self._stream = stream
        self._painted = painted

    def write(self, text: str) -> int:
        if text:
            self._painted.erase()
        return self._stream.write(text)

    def writelines(self, lines: list[str]) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


class Painted:
    """The painted prompt and the terminal mode it was painted under."""

    def __init__(self, saved: list[Any]) -> None:
        self._saved = saved
        self._shown = False
        self.released = False
        self._on_term_before: Any = signal.getsignal(signal.SIGTERM)

    def take(self) -> None:
        """SIGTERM answered here, the prompt's mode set (never flushing), the prompt shown."""
        self._on_term_before = signal.signal(signal.SIGTERM, self._on_term)
        termios.tcsetattr(0, termios.TCSANOW, _prompt_mode(self._saved))
        self.show()

    def _on_term(self, signum: int, frame: FrameType | None) -> None:
        self.abandon()
        raise SystemExit(143)

    def show(self) -> None:
        os.write(1, (ERASE + PROMPT).encode())  # over keys echoed before yagent started
        self._shown = True

    def erase(self) -> None:
        if self._shown:
            self._shown = False
            os.write(1, ERASE.encode())

    def release(self) -> None:
        """The terminal's own mode back (the session has taken the prompt)."""
        if not self.released:
            self.released = True
            _restore(self._saved)
            if signal.getsignal(signal.SIGTERM) == self._on_term:
                signal.signal(signal.SIGTERM, self._on_term_before)

    def abandon(self) -> None:
        """The session never took the prompt: erase it, discard what was typed for it."""
        self.erase()
        if not self.released:
            with contextlib.suppress(termios.error):
                termios.tcflush(0, termios.TCIFLUSH)
        self.release()


def _restore(saved: list[Any]) -> None:
    with contextlib.suppress(termios.error):
        termios.tcsetattr(0, termios.TCSANOW, saved)


def _prompt_mode(saved: list[Any]) -> list[Any]:
    """`saved` with the input side switched as prompt-toolkit's raw mode does; output as it was
    (a newline still starts a line)."""
    mode = [*saved[:6], list(saved[6])]
    mode[3] &= ~(termios.ECHO | termios.ICANON | termios.IEXTEN | termios.ISIG)
    mode[0] &= ~(termios.IXON | termios.IXOFF | termios.ICRNL | termios.INLCR | termios.IGNCR)
    mode[6][termios.VMIN] = 1
    mode[6][termios.VTIME] = 0
    return mode


def release() -> None:
    """Give the terminal back (the session's first prompt returned); nothing when not painted."""
    if _active is not None:
        _active.release()


@contextlib.contextmanager
def paint() -> Iterator[Painted]:
    """Paint the prompt for the duration (see the contract)."""
    global _active
    painted = Painted(termios.tcgetattr(0))
    out, err = sys.stdout, sys.stderr
    try:
        sys.stdout = cast(TextIO, _Erasing(out, painted))
        sys.stderr = cast(TextIO, _Erasing(err, painted))
        _active = painted
        painted.take()
        yield painted
    finally:
        _active = None
        sys.stdout.flush()  # what was written through the wrappers, before they go
        sys.stdout, sys.stderr = out, err
        painted.abandon()
