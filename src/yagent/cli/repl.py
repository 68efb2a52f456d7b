"""The interactive session: read a message, run it as a turn of the conversation, show it.

Contract:
- The conversation (`Conversation`) owns its session id: a task's session is created before its
  first turn runs, so a turn that is stopped (Ctrl-C, Esc) keeps it and the next task continues
  it. `/clear` starts a new one, `/resume` switches to another.
- A line starting with `/` is a slash command (`cli.slash`), never a task. `@path` names of
  workspace files bring the file into the task: its content when it is at most `REF_BYTES`
  bytes, else a reference saying its size (visible, never a silent cut).
- Ctrl-D (or `/quit`) ends the session with one summary line — the session id, how many files its
  tools changed, the cost — and the command that resumes it.
- Esc during a turn stops it as Ctrl-C does (the terminal is read for it between questions only).
Left to `cli.runner`: how a turn runs and drains; to `cli.screen`: how it is shown.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import sys
import termios
import tty
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
from rich.markup import escape

from yagent.app.assemble import App
from yagent.app.config import LLMConfig
from yagent.app.durable import Decision
from yagent.app.runtrack import continuation_task
from yagent.cli import edits, prompt, slash
from yagent.cli.runner import Options, cli_app, run_turn, stop_if_full
from yagent.cli.screen import KeyAsk, Screen
from yagent.memory import SessionStoreError
from yagent.tools.files import journal

REF_BYTES = 32 * 1024
_REF = re.compile(r"(?<![\w@])@([\w./-]+)")
PROMPT = "yagent> "


@dataclass
class Conversation:
    app: App
    renderer: Screen
    session_id: str | None = None
    agent: str | None = None
    turns: edits.Turns = field(default_factory=edits.Turns)
    notes: list[str] = field(default_factory=list)  # said to the model with the next task
    escape: EscapeKey = field(default_factory=lambda: EscapeKey())
    main_llm: LLMConfig | None = None  # the [llm] the session started with (`/model` switches)

    @property
    def state_dir(self) -> Path:
        return self.app.home / "state" / (self.session_id or "none")

    def say(self, text: str, *, markup: bool = True) -> None:
        self.renderer.console.print(text, markup=markup, highlight=False)

    def drain_events(self) -> None:
        while (event := self.app.dispatcher.receive_nowait()) is not None:
            self.renderer.show(event)

    def refresh_status(self) -> None:
        status = self.renderer.status
        status.agent = self.agent or self.app.config.agent.default
        status.model = self.app.engine.model
        snap = self.app.ledger.snapshot().session
        status.tokens = (snap.usage.input_tokens, snap.usage.output_tokens)
        status.cost = snap.cost

    def summary(self) -> str:
        if self.session_id is None:
            return "bye — no task was run"
        changed = len({e.path for e in journal.entries(self.state_dir).edits})
        cost = self.renderer.status.cost
        money = f"${cost:.4f}" if cost is not None else "cost unknown"
        return (
            f"session {self.session_id[:12]} · {changed} file(s) changed · {money} — "
            f"resume: yagent resume {self.session_id[:12]}"
        )


def expand_refs(task: str, workspace: Path) -> str:
    """`task` with the workspace files it names as `@path` attached (see the contract)."""
    attached: list[str] = []
    for name in dict.fromkeys(_REF.findall(task)):
        target = workspace / name
        real = Path(os.path.realpath(target))
        if not real.is_relative_to(workspace.resolve()) or not real.is_file():
            continue
        size = real.stat().st_size
        if size > REF_BYTES:
            attached.append(f"(@{name} is {size} bytes, not attached: read it with read_file)")
            continue
        text = real.read_bytes().decode("utf-8", errors="replace")
        attached.append(f'<file path="{name}">\n{text}\n</file>')
    return task if not attached else task + "\n\n" + "\n\n".join(attached)


class EscapeKey:
    """Esc during a turn stops it as Ctrl-C does (it raises SIGINT); the watch is suspended while
    a question reads the terminal, so no answer key is taken for it."""

    def __init__(self) -> None:
        self._saved: list[Any] | None = None
        try:
            self._fd = sys.stdin.fileno()
            self._saved = termios.tcgetattr(self._fd) if os.isatty(self._fd) else None
        except (OSError, ValueError):  # no terminal on standard input: nothing to watch
            self._fd = -1
        self._group: anyio.abc.TaskGroup | None = None
        self._stopped = anyio.Event()
        self._scope: anyio.CancelScope | None = None

    @contextlib.asynccontextmanager
    async def during_turn(self) -> AsyncIterator[None]:
        if self._saved is None:
            yield
            return
        async with anyio.create_task_group() as group:
            self._group = group
            self._start()
            try:
                yield
            finally:
                self._group = None
                self._stop()

    @contextlib.asynccontextmanager
    async def suspended(self) -> AsyncIterator[None]:
        if self._group is None:
            yield
            return
        self._stop()
        await self._stopped.wait()  # its reader is off the descriptor before the question's
        try:
            yield
        finally:
            if self._group is not None:
                self._start()

    def _start(self) -> None:
        assert self._group is not None
        tty.setcbreak(self._fd)  # keys one by one; Ctrl-C still signals
        self._scope = anyio.CancelScope()
        self._stopped = anyio.Event()
        self._group.start_soon(self._watch, self._scope, self._stopped)

    def _stop(self) -> None:
        if self._scope is not None:
            self._scope.cancel()
            self._scope = None
        if self._saved is not None:
            termios.tcsetattr(self._fd, termios.TCSADRAIN, self._saved)

    async def _watch(self, scope: anyio.CancelScope, stopped: anyio.Event) -> None:
        try:
            with scope:
                while True:
                    await anyio.wait_readable(self._fd)
                    if os.read(self._fd, 64) == b"\x1b":  # Esc alone, not an arrow key's
                        os.kill(os.getpid(), signal.SIGINT)
        finally:
            stopped.set()


ReadLine = Callable[[], Awaitable[str | None]]


async def interactive(
    opts: Options,
    *,
    plain: bool = False,
    session_id: str | None = None,
    resume: Decision | None = None,
    read_line: ReadLine | None = None,
    ask_key: KeyAsk | None = None,
) -> int:
    """The REPL (see the module's contract); its exit status. `read_line` (None at the end of
    input) and `ask_key` replace the terminal's prompt and one-key questions (tests, hosts)."""
    screen = Screen(ask_key=ask_key or prompt.ask_key, ask_line=_ask_line, plain=plain)
    async with cli_app(opts, screen) as app:
        conv = Conversation(app, screen, session_id, opts.agent)
        screen.suspend_keys = conv.escape.suspended
        screen.status.preset = app.config.agent.preset
        screen.settings_path = str(app.home / "settings.json")
        conv.refresh_status()
        screen.console.print(
            f"[bold]yagent[/] in {escape(str(opts.workspace))} · model {app.engine.model} · "
            "/help for commands and keys · Ctrl-C stops a turn · Ctrl-D quits"
        )
        read = read_line or _terminal_reader(conv, opts, plain)
        if resume is not None:
            await _turn(conv, continuation_task(resume), resume=resume)
        while (line := await read()) is not None:
            if not line.strip():
                continue
            if line.lstrip().startswith("/"):
                if not await slash.run(conv, line.strip()):
                    break
                continue
            await _turn(conv, line)
        screen.console.print(conv.summary(), markup=False)
        return 0


def _terminal_reader(conv: Conversation, opts: Options, plain: bool) -> ReadLine:
    history, problem = prompt.open_history(opts.home, opts.workspace)
    if problem:
        conv.renderer.notice(problem)
    arguments = {"model": lambda: [c.name for c in slash.model_choices(conv)]}
    completer = prompt.InputCompleter(slash.COMMANDS, opts.workspace, arguments)
    reader = prompt.session(history, completer, conv.renderer.status.line, plain=plain)

    async def read() -> str | None:
        while True:
            try:
                return await reader.prompt_async(PROMPT)
            except EOFError:
                return None
            except KeyboardInterrupt:
                continue  # Ctrl-C at the prompt clears the line

    return read


async def _turn(conv: Conversation, line: str, resume: Decision | None = None) -> None:
    app, screen = conv.app, conv.renderer
    task = expand_refs(line, app.workspace) if resume is None else line
    if conv.notes:
        task = "\n".join(conv.notes) + "\n\n" + task
        conv.notes.clear()
    if conv.session_id is None:
        conv.session_id = app.new_session(line, conv.agent)
    conv.turns.begin(conv.state_dir)
    screen.new_turn()
    agent = None if resume is not None else conv.agent
    async with conv.escape.during_turn():
        _, result = await run_turn(app, screen, task, conv.session_id, agent, resume=resume)
    try:
        conv.turns.end(app.store, conv.session_id, conv.state_dir)
    except SessionStoreError as exc:
        screen.notice(f"this turn's file changes were not recorded for /undo: {exc}")
    session = app.safety.commands.session
    screen.status.jobs = len(await session.jobs()) if session is not None and session.started else 0
    conv.refresh_status()
    if result is None or screen.interrupted:
        screen.console.print(
            "[yellow]turn stopped[/] — the conversation is kept; the next task continues it"
        )
    else:
        screen.final(conv.session_id, result)
    stop_if_full(app, conv.session_id)  # a full disk halted the turn: one line, exit 75


async def _ask_line(text: str) -> str:
    from prompt_toolkit import PromptSession

    return await PromptSession[str]().prompt_async(text)
