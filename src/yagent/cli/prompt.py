"""The interactive prompt (prompt-toolkit), imported only by the interactive path.

Contract:
- Enter sends; Ctrl-O sends `/last` (the last turn's full results); Alt-Enter (Esc then Enter)
  and Ctrl-J insert a newline; a pasted block (bracketed
  paste) is inserted whole, newlines included, and sent as one message by the next Enter.
- History is kept per workspace in `<home>/history/<digest of the workspace path>.txt` (the
  digest, not the path, names the file: no workspace path is spelled in the home); Up/Down walk
  it, Ctrl-R searches it backwards. A history file that cannot be written degrades to memory-only
  history, said once as a notice.
- Tab completes slash commands (`/he` → `/help`) and `@path` references to workspace files (not
  into `.git`, at most `MAX_PATHS` names walked, hidden and ignored noise directories skipped).
- The bottom toolbar is the status line (`status()` is called on every redraw).
- `ask_key` asks a one-key question: the first key that names a choice answers it; Enter picks
  the default; anything else is ignored.
Left to the caller: what a sent line means (a task, a slash command) and the status text.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from prompt_toolkit import PromptSession
from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document
from prompt_toolkit.filters import is_searching
from prompt_toolkit.formatted_text import ANSI, AnyFormattedText
from prompt_toolkit.history import FileHistory, History, InMemoryHistory
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.output import ColorDepth

from yagent.tools.treewalk import walk

MAX_PATHS = 5000
_SKIP_DIRS = {".git", "node_modules", "__pycache__", ".venv", "venv", ".mypy_cache", ".tox"}


def history_file(home: Path, workspace: Path) -> Path:
    digest = hashlib.sha256(os.fsencode(workspace)).hexdigest()[:16]
    return home / "history" / f"{digest}.txt"


def open_history(home: Path, workspace: Path) -> tuple[History, str | None]:
    """The workspace's persistent history, or memory-only history and the reason why."""
    path = history_file(home, workspace)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch(exist_ok=True)
        with path.open("a"):
            pass
    except OSError as exc:
        return InMemoryHistory(), f"input history not kept ({path}: {exc.strerror or exc})"
    return FileHistory(str(path)), None


def workspace_files(root: Path, limit: int = MAX_PATHS) -> list[str]:
    """Workspace-relative file names for `@` completion, sorted; at most `limit` walked."""
    found: list[str] = []
    for top, dirs, files in walk(root):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS and not d.startswith("."))
        rel = os.path.relpath(top, root)
        for name in sorted(files):
            found.append(name if rel == "." else f"{rel}/{name}")
            if len(found) >= limit:
                return found
    return found


class InputCompleter(Completer):
    """Slash commands at the start of the line, their arguments where `arguments` knows them
    (asked afresh at each completion), `@path` anywhere."""

    def __init__(
        self,
        commands: Mapping[str, str],
        root: Path,
        arguments: Mapping[str, Callable[[], Iterable[str]]] | None = None,
    ) -> None:
        self._commands = commands
        self._root = root
        self._arguments = dict(arguments or {})
        self._files: list[str] | None = None  # walked once, on the first `@`

    def get_completions(self, document: Document, event: CompleteEvent) -> Iterable[Completion]:
        text = document.text_before_cursor
        if text.startswith("/") and " " not in text:
            for name, help_text in self._commands.items():
                if name.startswith(text[1:]):
                    yield Completion(f"/{name}", -len(text), display_meta=help_text)
            return
        command, _, typed = text[1:].partition(" ") if text.startswith("/") else ("", "", "")
        if command in self._arguments and " " not in typed:
            for value in self._arguments[command]():
                if value.startswith(typed) or typed in value:
                    yield Completion(value, -len(typed))
            return
        word = text.rsplit(None, 1)[-1] if text and not text[-1].isspace() else ""
        if not word.startswith("@"):
            return
        if self._files is None:
            self._files = workspace_files(self._root)
        typed = word[1:]
        for name in self._files:
            if name.startswith(typed) or (typed and f"/{typed}" in f"/{name}"):
                yield Completion(f"@{name}", -len(word))


def _bindings() -> KeyBindings:
    keys = KeyBindings()

    @keys.add("enter", filter=~is_searching)  # in a Ctrl-R search, Enter accepts the match
    def _send(event: KeyPressEvent) -> None:
        event.current_buffer.validate_and_handle()

    @keys.add("c-o", filter=~is_searching)  # the last turn's full results: `/last`
    def _last(event: KeyPressEvent) -> None:
        event.current_buffer.text = "/last"
        event.current_buffer.validate_and_handle()

    @keys.add("escape", "enter", filter=~is_searching)
    @keys.add("c-j", filter=~is_searching)
    def _newline(event: KeyPressEvent) -> None:
        event.current_buffer.insert_text("\n")

    return keys


def session(
    history: History,
    completer: Completer,
    status: Callable[[], str] | None,
    *,
    plain: bool = False,
) -> PromptSession[str]:
    """The prompt; `plain`: no colour and no status bar (screen readers)."""
    return PromptSession[str](
        color_depth=ColorDepth.MONOCHROME if plain else None,
        history=history,
        completer=completer,
        complete_while_typing=False,
        multiline=True,
        key_bindings=_bindings(),
        enable_history_search=False,  # Up walks history; Ctrl-R searches it
        bottom_toolbar=(lambda: ANSI(status())) if status is not None and not plain else None,
        prompt_continuation=lambda width, line, wrap: "." * (width - 1) + " ",
    )


async def ask_key(
    prompt: AnyFormattedText, choices: Mapping[str, str], default: str | None = None
) -> str:
    """One key from `choices` (key → the answer it stands for); Enter gives `default`."""
    keys = KeyBindings()

    def answer(value: str) -> Callable[[KeyPressEvent], None]:
        def handler(event: KeyPressEvent) -> None:
            event.app.exit(result=value)

        return handler

    @keys.add("<any>")  # first: a later binding for the same key wins
    def _ignore(event: KeyPressEvent) -> None:
        pass

    for key, value in choices.items():
        keys.add(key)(answer(value))
    if default is not None:
        keys.add("enter")(answer(default))

    ask: PromptSession[str] = PromptSession(key_bindings=keys)
    return await ask.prompt_async(prompt)
