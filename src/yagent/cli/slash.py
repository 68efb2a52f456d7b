"""Slash commands of the interactive session (`/help` lists them; docs/usage.md documents them).

Contract:
- A line starting with `/` is a command, never a task. An unknown command is refused with the
  nearest known name(s) (`difflib`), and nothing is sent to the model. Only `/model`, `/agent`
  and `/resume` take words (`TAKES_WORDS`); any other command given some (`/undo 2`) says it is
  used alone, with what it does, and does nothing.
- Commands act on the `Conversation` (the REPL's state) and print through its renderer; they
  return False only for `/quit`. A command's bad argument (an unknown model, agent or session)
  is one line saying what is known — never a traceback.
- `/undo` and `/diff` read the session's own record (`cli.edits`): only what the session's
  tools changed, never the person's own changes; they work on a resumed session too.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Awaitable, Callable

from rich.markup import escape

from yagent.agents import catalog
from yagent.app import llmproviders, projectkeys
from yagent.app.compactnow import compact_now
from yagent.app.config import ConfigError, LLMConfig
from yagent.app.engines import NoProviderError, build_engine
from yagent.app.memories import MemoryFileError, files, heading
from yagent.cli import edits
from yagent.cli.conversation import Conversation
from yagent.cli.safetext import visible
from yagent.llm.pricing import Totals
from yagent.memory import SessionStoreError

COMMANDS = {
    "help": "this list, and the keys",
    "clear": "start a new session (the next task begins it)",
    "compact": "compact the session's history now and show what was kept",
    "model": "show the model, or switch to NAME (or LABEL/NAME: another provider)",
    "agent": "show the agent and the known ones, or switch to NAME (built in or yours)",
    "sessions": "this workspace's sessions",
    "resume": "continue session ID (the latest other one by default)",
    "cost": "tokens and money of this process's sessions, in total and per model",
    "context": "what fills the context window, per segment",
    "memory": "the memories injected into every agent's context",
    "trust": "whether this workspace's own .yagent/ files are trusted",
    "jobs": "background jobs of this session",
    "diff": "what the session's tools changed so far",
    "undo": "revert the last turn's file changes (yours are never touched)",
    "last": "the last turn's tool results in full",
    "quit": "leave (Ctrl-D does the same)",
}

TAKES_WORDS = ("model", "agent", "resume")  # the others are used alone

_LLM_FIELDS = ("provider", "model", "base_url", "api_key_env", "api_key_file")
KEYS = (
    ("Enter", "send the message"),
    ("Alt-Enter, Ctrl-J", "new line (a pasted block stays one message)"),
    ("Up / Down", "walk this workspace's input history"),
    ("Ctrl-R", "search the history"),
    ("Tab", "complete /commands and @file references"),
    ("Ctrl-O", "the last turn's tool results in full (/last)"),
    ("Ctrl-C (or Esc)", "stop the turn; a second press within 2 s kills its processes"),
    ("Ctrl-D", "quit with a summary and how to resume"),
)


def nearest(name: str) -> list[str]:
    return difflib.get_close_matches(name, COMMANDS, n=2, cutoff=0.5)


async def run(conv: Conversation, line: str) -> bool:
    """Run the command on `line`; False when the session should end."""
    name, _, arg = line[1:].strip().partition(" ")
    arg = arg.strip()
    handler = _HANDLERS.get(name)
    if handler is None:
        near = nearest(name)
        hint = f"did you mean {' or '.join('/' + n for n in near)}? " if near else ""
        conv.say(f"[red]unknown command /{escape(name)}[/] — {hint}/help lists them")
        return True
    if arg and name not in TAKES_WORDS:  # `/undo 2` must not undo the last turn
        conv.say(f"[red]/{name} takes no words[/]: `/{name}` alone — {escape(COMMANDS[name])}")
        return True
    if name == "quit":
        return False
    await handler(conv, arg)
    return True


async def _help(conv: Conversation, _: str) -> None:
    for name, text in COMMANDS.items():
        conv.say(f"  [bold]/{name}[/]  {text}")
    for key, text in KEYS:
        conv.say(f"  [bold]{key}[/]  {text}")


async def _clear(conv: Conversation, _: str) -> None:
    conv.session_id = None
    conv.say("new session: the next task starts it")


async def _compact(conv: Conversation, _: str) -> None:
    if conv.session_id is None:
        conv.say("nothing to compact: no task in this session yet")
        return
    await compact_now(conv.app, conv.session_id, conv.agent)
    conv.drain_events()


def _main_llm(conv: Conversation) -> LLMConfig:
    """The `[llm]` the session started with (a switch replaces `app.config.llm`)."""
    if conv.main_llm is None:
        conv.main_llm = conv.app.config.llm
    return conv.main_llm


def model_choices(conv: Conversation) -> list[llmproviders.Choice]:
    main = _main_llm(conv)
    return llmproviders.choices(main.model_dump(include=set(_LLM_FIELDS)), main.providers)


async def _model(conv: Conversation, arg: str) -> None:
    app = conv.app
    if not arg:
        conv.say(f"model {escape(app.engine.model)} ({app.config.llm.provider or 'ollama'})")
        listed = [c.name for c in model_choices(conv)]
        if len(listed) > 1:
            conv.say(f"configured: {escape(', '.join(listed))}")
        return
    main = _main_llm(conv)
    try:
        choice = llmproviders.resolve(
            arg, main.model_dump(include=set(_LLM_FIELDS)), main.providers
        )
        update = dict(choice.update) if choice is not None else {"model": arg}
        llm = app.config.llm.model_copy(update=update)
        app.engine = await build_engine(llm, home=app.home)
    except (NoProviderError, ValueError, ConfigError) as exc:
        conv.say(f"[red]model not changed:[/] {escape(str(exc).splitlines()[0])}")
        return
    app.config = app.config.model_copy(update={"llm": llm})
    conv.say(
        f"model is now {escape(app.engine.model)} ({llm.provider or 'ollama'}"
        f"{', ' + escape(llm.base_url) if llm.base_url else ''}; this process only)"
    )


async def _agent(conv: Conversation, arg: str) -> None:
    known = [*catalog.BUILTIN_AGENTS, *sorted(conv.app.config.agents)]
    if not arg:
        current = conv.agent or conv.app.config.agent.default
        conv.say(f"agent {current}; known: {', '.join(dict.fromkeys(known))}")
        return
    if arg not in known:
        near = difflib.get_close_matches(arg, known, n=1)
        hint = f" (did you mean {near[0]}?)" if near else ""
        conv.say(f"[red]unknown agent {escape(arg)}[/]{hint}; known: {', '.join(known)}")
        return
    conv.agent = arg
    conv.say(f"agent is now {arg} (from the next task)")


async def _sessions(conv: Conversation, _: str) -> None:
    rows = conv.app.store.list_sessions(limit=15, workspace=str(conv.app.workspace))
    if not rows:
        conv.say("no sessions here yet")
    for info in rows:
        mark = "*" if info.id == conv.session_id else " "
        conv.say(f"{mark} {info.id[:12]}  {info.status:<9} {escape(info.title)}", markup=True)


_LISTS = " — /sessions lists this workspace's, `yagent sessions --all` every one"


async def _resume(conv: Conversation, arg: str) -> None:
    store = conv.app.store
    try:
        if arg:
            info = store.get_session(arg)
        else:
            rows = store.list_sessions(limit=5, workspace=str(conv.app.workspace))
            others = [r for r in rows if r.id != conv.session_id]
            if not others:
                conv.say("no other session here to resume")
                return
            info = others[0]
    except SessionStoreError as exc:
        hint = _LISTS if isinstance(exc, LookupError) else ""  # as `yagent resume ID` says
        conv.say(f"[red]{escape(str(exc))}[/]{escape(hint)}")
        return
    conv.session_id = info.id
    conv.say(f"resumed {info.id[:12]} — {escape(info.title)}; the next task continues it")


async def _cost(conv: Conversation, _: str) -> None:
    snap = conv.app.ledger.snapshot()
    total = snap.session
    conv.say(f"session: {_usage(total)}")
    for model, totals in snap.by_model.items():
        conv.say(f"  {escape(model)}: {_usage(totals)}")


def _usage(totals: Totals) -> str:
    u, cost = totals.usage, totals.cost
    money = f"${cost:.4f}" if cost is not None else "cost unknown (unpriced steps)"
    return f"{u.input_tokens} in / {u.output_tokens} out tokens · {money}"


async def _context(conv: Conversation, _: str) -> None:
    seen = conv.renderer.status.context
    if seen is None:
        conv.say("no model request measured yet in this process")
        return
    total, window = int(seen.get("total", 0)), int(seen.get("window", 0)) or 1
    conv.say(f"context: ~{total} of {window} tokens ({100 * total / window:.0f}%)")
    for segment, tokens in dict(seen.get("segments", {})).items():
        conv.say(f"  {escape(str(segment))}: ~{tokens}")


async def _memory(conv: Conversation, _: str) -> None:
    for memory_file in files(conv.app.home, conv.app.workspace):
        try:
            items = memory_file.load()
        except MemoryFileError as exc:
            conv.say(f"{memory_file.scope}: {escape(str(exc))}")
            continue
        conv.say(heading(memory_file, len(items)))
        for item in items:
            conv.say(escape(visible(f"  {item.id}  {' '.join(item.text.split())}")))
    conv.say("[dim]add one: yagent memory add TEXT [--global][/]")


async def _trust(conv: Conversation, _: str) -> None:
    project = conv.app.config.project
    if not project.digests:
        conv.say("no project files here (.yagent/config.toml, shell-rules): nothing to trust")
        return
    for name, state in project.status.items():
        conv.say(f"  {escape(str(name))}: {state.value}")
    notice = projectkeys.notice(project)
    conv.say(escape(notice) if notice else "trusted")
    conv.say("[dim]review and change: yagent trust (--show, --revoke)[/]")


async def _jobs(conv: Conversation, _: str) -> None:
    session = conv.app.safety.commands.session
    jobs = await session.jobs() if session is not None and session.started else []
    if not jobs:
        conv.say("no background jobs")
    for job in jobs:
        conv.say(escape(job.line()))


async def _diff(conv: Conversation, _: str) -> None:
    if conv.session_id is None:
        conv.say("no session yet: nothing changed")
        return
    lines, count, unknown = edits.diff(conv.state_dir, conv.app.workspace)
    if not lines:
        conv.say(f"no changes ({count} file(s) changed and back as they were)")
    conv.renderer.diff(lines, fold=False)
    for line in unknown:
        conv.say(f"[yellow]{escape(line)}[/]")


async def _undo(conv: Conversation, _: str) -> None:
    if conv.session_id is None:
        conv.say("nothing to undo: no session yet")
        return
    store, session_id = conv.app.store, conv.session_id
    try:
        done = edits.undo(store, session_id, conv.state_dir, conv.app.workspace)
    except SessionStoreError as exc:  # the record could not be read or the undo not recorded
        conv.say(f"[red]undo stopped: {escape(str(exc))}[/]")
        return
    for line, shown in done:
        conv.say(escape(line))
        conv.renderer.diff(shown)
    reverted = [line for line, _ in done if line.startswith(("restored", "removed"))]
    if reverted:
        said = "; ".join(reverted)
        conv.notes.append(f"The person reverted these edits of yours with /undo: {said}")


async def _last(conv: Conversation, _: str) -> None:
    if not conv.renderer.results:
        conv.say("no tool results in the last turn")
    for name, args, content in conv.renderer.results:
        conv.say(f"[bold cyan]{escape(name)}[/] {escape(json.dumps(args, ensure_ascii=False))}")
        conv.renderer.console.print(content, markup=False, highlight=False)


async def _quit(conv: Conversation, _: str) -> None:
    return None


_HANDLERS: dict[str, Callable[[Conversation, str], Awaitable[None]]] = {
    "help": _help,
    "clear": _clear,
    "compact": _compact,
    "model": _model,
    "agent": _agent,
    "sessions": _sessions,
    "resume": _resume,
    "cost": _cost,
    "context": _context,
    "memory": _memory,
    "trust": _trust,
    "jobs": _jobs,
    "diff": _diff,
    "undo": _undo,
    "last": _last,
    "quit": _quit,
}
