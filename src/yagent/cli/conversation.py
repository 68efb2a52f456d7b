"""`Conversation`: the interactive session's state, shared by the REPL and the slash commands.

Contract: a conversation owns its session id (None until its first task), the agent it talks to,
the edits its turns made, the notes said to the model with the next task, and the Esc watch
(`EscapeKey`: Esc during a turn stops it as Ctrl-C does; suspended while a question reads the
terminal). `summary()` is the one closing line. It imports neither `repl` nor `slash`: both use it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import termios
import tty
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import anyio.abc

from yagent.app.assemble import App
from yagent.app.config import LLMConfig
from yagent.cli import edits
from yagent.cli.screen import Screen
from yagent.tools.files import journal


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
        self._saved = termios.tcgetattr(self._fd)  # the mode it found, restored by `_stop`
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
        while (event := self.app.dispatcher.next_in_order()) is not None:
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
