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
- A prompt painted before the app loaded (`cli.early`) is taken over by the first prompt, which
  reads every key typed meanwhile; the terminal's own mode is given back when it returns.
Left to `cli.runner`: how a turn runs and drains; to `cli.screen`: how it is shown.
"""

from __future__ import annotations

import os
import re
from collections.abc import Awaitable, Callable
from pathlib import Path

from rich.markup import escape

from yagent.app.durable import ResumeDecision
from yagent.app.runtrack import continuation_task
from yagent.cli import early, prompt, slash
from yagent.cli.conversation import Conversation
from yagent.cli.runend import stop_if_full
from yagent.cli.runner import Options, cli_app, run_turn
from yagent.cli.screen import KeyAsk, Screen
from yagent.memory import SessionStoreError

REF_BYTES = 32 * 1024
_REF = re.compile(r"(?<![\w@])@([\w./-]+)")
PROMPT = "yagent> "


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


ReadLine = Callable[[], Awaitable[str | None]]


async def interactive(
    opts: Options,
    *,
    plain: bool = False,
    session_id: str | None = None,
    resume: ResumeDecision | None = None,
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
            finally:
                early.release()  # this prompt read the keys typed before it was drawn

    return read


async def _turn(conv: Conversation, line: str, resume: ResumeDecision | None = None) -> None:
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
        name = resume.run.agent if resume is not None and resume.run is not None else conv.agent
        answers = app.agent(name or app.config.agent.default).reply_is_answer
        screen.final(conv.session_id, result, reply_is_answer=answers)
    stop_if_full(app, conv.session_id)  # a full disk halted the turn: one line, exit 75


async def _ask_line(text: str) -> str:
    from prompt_toolkit import PromptSession

    return await PromptSession[str]().prompt_async(text)
