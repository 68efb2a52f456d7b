"""The terminal side of a run: shows events, answers the authorization loop.

Human mode renders streamed text, tool calls and results with rich — on a terminal, with the
delegations of a parallel run as a live tree under them (`cli.tree`), printed for good when the
run ends; JSON mode prints every event as one JSON line (for CI).
JSON mode is lossless: attached to the app's dispatcher (`attach`), every event is written as it
is published, in publish order (`Dispatcher.write_through`), to standard output through
`cli.lineout` — a writer thread with bounded memory and an overflow file, so a reader of stdout
that stops reading never stops the run; a reader that goes away (`reader_gone`) is the host's to
act on. Human mode reads the dispatcher's bounded queue, which drops
the newest events under a flood: what it did not show is said in a line naming how many of which
kind (`dropped`), and in a `{"type": "dropped", "counts": {...}}` line in JSON mode should the
writer ever have been detached (a failed write).
Approval requests (`user_help_needed`) are answered by asking the person
when there is a terminal — yes / no / always for this tool / skip all — and refused with a stated
reason when there is none. Answers travel back through the dispatcher's critical queue and are
delivered to the authorization loop by the same pump that shows events.
The pump drains the dispatcher in batches: woken by the first event of a burst, it lets the rest
gather for `messaging.LINGER` (a critical event, a half-full queue or the end cuts that short),
then shows them in publish order (`Dispatcher.next_in_order`: an approval question after the
tool call it is about) — one wake-up per burst, not one per event. It yields after at most
`BATCH` events, so the Ctrl-C handler never waits behind a backlog.

Rich's Markdown renderer (and markdown-it with it) loads with the first result shown as Markdown,
not with the command: a run's first model request does not wait for it.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TextIO, cast

import anyio
from rich.console import Console, ConsoleRenderable
from rich.markup import escape

from yagent.agents.reports import looks_like_report
from yagent.agents.results import AgentResult, Status
from yagent.cli import economy_lines, lineout, stdoutgone
from yagent.cli.safetext import json_line, visible, visible_event
from yagent.cli.stream import StreamView
from yagent.cli.tree import LiveTree
from yagent.kernel.context.protocol import render_markdown
from yagent.messaging import (
    LINGER,
    USER_HELP_NEEDED,
    USER_HELP_RESPONSE,
    Dispatcher,
    DispatcherClosedError,
    Event,
)
from yagent.tools.confirm import Scope, response

Ask = Callable[[str], Awaitable[str]]
PREVIEW = 400
BATCH = 64  # events shown between two yields of the pump (module contract)

CHOICES = {
    "y": (True, Scope.ONCE),
    "yes": (True, Scope.ONCE),
    "a": (True, Scope.TOOL),
    "always": (True, Scope.TOOL),
    "s": (True, Scope.SESSION),
    "skip": (True, Scope.SESSION),
    "p": (True, Scope.PROJECT),
    "r": (True, Scope.RULE),  # a shell command: don't ask again (an allow rule in .yagent/)
    "remember": (True, Scope.RULE),
    "n": (False, Scope.ONCE),
    "no": (False, Scope.ONCE),
}
# the question before a local service opens (tools.localask): always = remembered for the project
OPENING_CHOICES = {
    "y": (True, Scope.ONCE),
    "yes": (True, Scope.ONCE),
    "a": (True, Scope.PROJECT),
    "always": (True, Scope.PROJECT),
    "n": (False, Scope.ONCE),
    "no": (False, Scope.ONCE),
}


def _line(kind: str, p: Mapping[str, Any]) -> str | None:
    """The markup line an event is shown as in the terminal; None when it is not shown."""
    shown = economy_lines.line(kind, p)
    if shown is not None:
        return shown
    if kind == "tool_call":
        return f"[bold cyan]→ {p.get('name')}[/] {escape(_clip(str(p.get('arguments')), 200))}"
    if kind == "tool_result":
        style = "green" if p.get("ok") else "red"
        return f"[{style}]  ← {escape(_clip(str(p.get('content', ''))))}[/]"
    if kind == USER_HELP_NEEDED:
        if p.get("kind") == "question":
            return f"[bold yellow]? {escape(str(p.get('question')))}[/]"
        args = _clip(json.dumps(p.get("args", {}), ensure_ascii=False), 300)
        return (
            f"[bold yellow]! {p.get('tool')} needs your approval:[/] "
            f"{escape(str(p.get('reason')))}\n  {escape(args)}"
        )
    if kind == "reminder":
        return "[dim](reminded the agent to use its tools)[/]"
    if kind == "hook" and (
        p.get("status") != "ok" or p.get("decision") != "allow" or p.get("reason")
    ):
        style = "dim" if p.get("decision") == "allow" and p.get("status") == "ok" else "yellow"
        said = escape(_clip(str(p.get("reason", ""))))
        return f"[{style}]hook {escape(str(p.get('hook')))} ({p.get('event')}): {said}[/]"
    if kind == "side_effect" and p.get("outcome") in ("uncertain", "unrecorded"):
        return (
            f"[bold yellow]! side effect of unknown outcome, not re-run — reconcile it: "
            f"yagent reconcile --applied|--not-applied {p.get('key')}[/] "
            f"({escape(str(p.get('reason')))})"
        )
    if kind == "run_end" and p.get("error"):
        return f"[red]run ended: {p.get('status')}: {escape(str(p.get('error')))}[/]"
    return None


def _receipt(r: object) -> str | None:
    """A delegation's or parallel task's end, under its name: status, then why or what."""
    if not isinstance(r, Mapping):
        return None
    status = str(r.get("status", ""))
    style = "green" if status == "completed" else "yellow" if status == "paused" else "red"
    said = str(r.get("reason") or r.get("output") or "").strip().splitlines()
    notes = "".join(f"\n  note: {escape(str(n))}" for n in r.get("notes") or ())
    return f"[bold {style}]{status}[/] {escape(_clip(said[0], 200)) if said else ''}{notes}"


def _clip(text: str, limit: int = PREVIEW) -> str:
    return text if len(text) <= limit else text[:limit] + f"… [{len(text) - limit} more chars]"


class Renderer:
    def __init__(self, *, json_mode: bool, ask: Ask | None, out: TextIO | None = None) -> None:
        self.json_mode = json_mode
        self.ask = ask
        # --json to the process's stdout: through a writer thread (`cli.lineout`); a guarded
        # stdout (`stdoutgone.Guarded`) says when its reader went away
        self.lineout: lineout.LineOut | stdoutgone.Guarded | None = None
        if json_mode and out is None:
            self.lineout = lineout.stdout()
        elif isinstance(out, (stdoutgone.Guarded, lineout.LineOut)):
            self.lineout = out
        self.out: TextIO = out or cast(TextIO, self.lineout) or sys.stdout
        self.stdout_wait = lineout.WAIT  # `[agent] stdout_wait`, once the configuration is read
        self.console = Console(file=self.out, highlight=False, soft_wrap=True)
        self.stream = StreamView(self.out, self.console)
        self.stream_tick = 0.05  # seconds without events before waiting streamed text is shown
        self.linger = LINGER  # seconds a burst gathers after its first event
        # delegations as a live tree under the output, on a terminal only (`cli.tree`)
        self.tree = LiveTree(self.console) if self.console.is_terminal and not json_mode else None
        self.interrupted = False  # the person stopped this turn: its run_end is not news
        self.stopped_for_reader = False  # the turn was stopped: stdout's reader went away
        self._through: Dispatcher | None = None  # JSON lines written at publish (`attach`)
        self._ended = False  # the JSON result line is written: it stays the last line

    def attach(self, dispatcher: Dispatcher) -> None:
        """JSON mode: every event `dispatcher` is sent is written as it is sent (module
        contract); human mode reads the queue in `pump`."""
        if self.json_mode:
            self._through = dispatcher
            dispatcher.write_through(self._write_through)

    def _write_through(self, event: Event) -> None:
        # an answer is routed, never shown; after the result line (`final`) the stream is over:
        # what the app publishes while it closes (the session_end hook) is in the session's log
        if event.type != USER_HELP_RESPONSE and not self._ended:
            self._write_json(event)

    async def reader_gone(self) -> None:
        """Return once the reader of the --json stream has gone (a failed write); never
        otherwise."""
        if self.lineout is None:
            await anyio.sleep_forever()
        else:
            await self.lineout.wait_gone()

    async def end_output(self, session_id: str) -> int | None:
        """The --json stream finished (`lineout.end`): None when every line was written, else
        the exit status, said on stderr."""
        if self.lineout is None:
            return None
        kept = lineout.session_kept(session_id)
        stopped = self.stopped_for_reader
        return await lineout.end(self.lineout, self.stdout_wait, kept, stopped=stopped)

    def _written(self) -> bool:
        return self._through is not None and self._through.writes_through()

    # -- the pump ------------------------------------------------------------------------
    async def pump(self, app: Any) -> None:
        """Read the app's dispatcher until it closes: show events, route answers (module
        contract: batches, order, a yield after at most `BATCH` events)."""
        dispatcher = app.dispatcher
        while True:
            with anyio.move_on_after(self.stream_tick):
                try:
                    await dispatcher.ready(self.linger)
                except DispatcherClosedError:
                    return
            shown = 0
            while shown < BATCH and (event := dispatcher.next_in_order()) is not None:
                shown += 1
                if event.type == USER_HELP_RESPONSE:
                    if app.confirm is not None:
                        app.confirm.consume(event)
                elif event.type == USER_HELP_NEEDED:
                    dispatcher.send(await self.answer(visible_event(event)))
                else:
                    self.show(event)
            self.dropped(dispatcher.take_drops())
            if not shown:
                self.stream.tick()  # streamed text that waited long enough
                if self.tree is not None:
                    self.tree.tick()  # the elapsed times move

    async def answer(self, event: Event) -> Event:
        payload = event.payload
        rid = str(payload.get("request_id", ""))
        self.show(event)
        if self.ask is None:
            return response(rid, approved=False, text="no interactive terminal", asked=False)
        if isinstance(self.lineout, lineout.LineOut):
            await self.lineout.drained()  # the question is read before it is asked
        if payload.get("kind") == "question":
            text = await self.ask("answer> ")
            return response(rid, approved=True, text=text)
        opening = str(payload.get("opening") or "")
        if opening.isdigit():
            opening = f"port {opening} on this machine"
        while True:
            if opening:
                choice = await self.ask(
                    f"open {opening} for this project? [y]es, this session / [a]lways "
                    "(remembered in settings.json in yagent's home) / [n]o: "
                )
                picked = OPENING_CHOICES.get(choice.strip().lower())
            else:
                choice = await self.ask(
                    "allow? [y]es/[n]o/[a]lways this tool/[s]kip all/[p]roject/[r]emember command: "
                )
                picked = CHOICES.get(choice.strip().lower())
            if picked is not None:
                return response(rid, approved=picked[0], scope=picked[1])

    # -- showing -------------------------------------------------------------------------
    def notice(self, text: str) -> None:
        """A warning about the run's set-up: a JSON line of type "notice" in --json mode (stdout
        stays JSON lines), a yellow line otherwise."""
        if self.json_mode:
            self.out.write(json_line({"type": "notice", "text": text}) + "\n")
            self.out.flush()
            return
        self.console.print(visible(text), style="yellow", markup=False)

    def dropped(self, counts: Mapping[str, int]) -> None:
        """Say which events the display dropped (module contract); nothing when none was."""
        if not counts:
            return
        if self.json_mode:
            self.out.write(json_line({"type": "dropped", "counts": dict(counts)}) + "\n")
            self.out.flush()
            return
        said = ", ".join(f"{n} {kind}" for kind, n in sorted(counts.items()))
        self.stream.end_turn()
        self.console.print(
            f"[yellow]display fell behind: not shown here: {escape(said)} event(s) "
            "(the session's log keeps every one)[/]"
        )

    def rest(self, dispatcher: Dispatcher) -> None:
        """What was published after the pump stopped, then what was dropped."""
        while (event := dispatcher.next_in_order()) is not None:
            self.show(event)
        self.dropped(dispatcher.take_drops())

    def _write_json(self, event: Event) -> None:
        line = {"type": event.type, "delegation_id": event.delegation_id, **event.payload}
        self.out.write(json_line(line) + "\n")
        self.out.flush()

    def show(self, event: Event) -> None:
        if self.json_mode:
            if not self._written():  # else written as it was published (`attach`)
                self._write_json(event)
            return
        event = visible_event(event)
        p = event.payload
        if event.delegation_id:  # a task of a parallel run: its lines carry its name
            if self.tree is not None:
                self.tree.update(event)
            self._show_lane(event.delegation_id.split("@", 1)[0], event)
            return
        if event.type == "run_end" and self.tree is not None:
            self.tree.stop()  # the run is over: its delegations' final tree, for good
        if event.type == "assistant_delta":
            self.stream.feed(str(p.get("text", "")), str(p.get("channel", "answer")))
            return
        if event.type == "assistant_turn":
            self.stream.end_turn(str(p.get("text", "")))
            return
        self.stream.end_turn()
        if event.type == "run_end" and self.interrupted:
            return  # the host says in one line that the person stopped it
        shown = _line(event.type, p)
        if shown is not None:
            self.console.print(shown)

    def _show_lane(self, lane: str, event: Event) -> None:
        """Parallel tasks interleave: their text is not streamed (deltas of two tasks would mix
        in one line) but shown whole per turn, and every line starts with the task's name."""
        p = event.payload
        if event.type == "assistant_delta":
            return
        self.stream.end_turn()
        if event.type == "assistant_turn":
            text = str(p.get("text", "")).strip()
            shown = escape(_clip(text, 400)) if text else None
        elif event.type == "delegation_start":
            shown = (
                f"[bold]started[/] ({escape(str(p.get('agent')))}): {escape(str(p.get('areas')))}"
            )
        elif event.type == "delegation_receipt":
            shown = _receipt(p.get("receipt"))
        else:
            shown = _line(event.type, p)
        if shown is not None:
            self.console.print(f"[magenta]{escape(f'[{lane}]')}[/] {shown}")

    def final(
        self,
        session_id: str,
        result: AgentResult,
        outcome: Mapping[str, Any] | None = None,
        *,
        reply_is_answer: bool = False,
    ) -> None:
        """The run's result; `outcome` (`cli.outcome.summary`) joins the JSON line.

        `reply_is_answer`: the agent answers in plain text by design (chat), so its `answered`
        run is not flagged on screen as a missing submission (the JSON line keeps the note)."""
        if self.json_mode:
            line = {
                "type": "result",
                "session_id": session_id,
                "status": result.status.value,
                "deliverable": result.deliverable,
                "text": result.text,
                "note": result.note,
                "error": result.error,
                "steps": result.steps,
                "usage": result.usage.to_dict(),
                "report": result.report.report.model_dump(mode="json") if result.report else None,
                "report_repaired": result.report.repaired if result.report else False,
                "report_note": result.report_note,
                **(outcome or {}),
            }
            self.out.write(json_line(line) + "\n")
            self._ended = True
            return
        parsed = result.report
        if result.deliverable and (
            parsed is None
            or (
                parsed.report.summary != result.deliverable
                and not looks_like_report(result.deliverable)
            )
        ):
            self.console.print(_markdown(visible(result.deliverable)))
        if parsed is not None:
            shown = render_markdown(parsed.report, repaired=parsed.repaired)
            self.console.print(_markdown(visible(shown)))
        answered = reply_is_answer and result.status is Status.ANSWERED
        if result.note and not answered:
            self.console.print(f"[yellow]{escape(visible(result.note))}[/]")
        u = result.usage
        self.console.print(
            f"[dim]{result.status.value} · {result.steps} steps · {u.input_tokens} in / "
            f"{u.output_tokens} out tokens · session {session_id[:12]}[/]"
        )


def _markdown(text: str) -> ConsoleRenderable:
    """`text` as rich renders Markdown (the renderer loads here: see the module docstring)."""
    from rich.markdown import Markdown

    return Markdown(text)
