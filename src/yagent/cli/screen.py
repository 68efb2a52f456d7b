"""The interactive terminal's rendering: compact tool lines, edit diffs, folding, approvals, status.

Contract (interactive sessions only; `yagent run` and `--json` keep `Renderer` as it is):
- A tool call is one line when it starts (`● tool key-argument`) and one when it ends (`✓`/`✗`,
  the tool, its duration, and the result's first line with a count of the lines not shown); the
  full results of the last turn stay available to `/last`.
- An edit's receipt diff is shown as a coloured unified diff; any shown block longer than `FOLD`
  lines is cut there with a visible "… N more lines" line naming `/last` (or `/diff`).
- An approval shows exactly what will happen: the diff of an edit (old → new text), the file and
  size of a write, the command with the rule that made it a question and the sandbox it runs in,
  the URL of a fetch; then one-key choices, each "always" choice saying what it remembers and
  where. Ctrl-C at the question is "no".
- `plain` (screen readers, `--plain`, dumb terminals): no colour, no Markdown, ASCII marks; the
  same words. `NO_COLOR` turns colour off (rich and prompt-toolkit honour it); a terminal whose
  encoding is not UTF-8 gets ASCII marks and `?` for what it cannot show, never an error.
- The status (`status_line`) is agent, model, context used %, tokens and cost, background jobs
  and sandbox preset.
"""

from __future__ import annotations

import contextlib
import difflib
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.text import Text

from yagent.cli.calls import arguments, key_argument
from yagent.cli.render import Renderer
from yagent.cli.safetext import visible_event, visible_value
from yagent.cli.stream import StreamView
from yagent.cli.tree import LiveTree
from yagent.messaging import Event
from yagent.tools.confirm import Scope, response
from yagent.tools.shellrules import RULES_FILE

FOLD = 40
KeyAsk = Callable[[str, Mapping[str, str]], Awaitable[str]]


@dataclass
class Status:
    agent: str = ""
    model: str = ""
    preset: str = ""
    context: dict[str, Any] | None = None  # the last `context` measurement
    tokens: tuple[int, int] = (0, 0)
    cost: float | None = 0.0
    jobs: int = 0
    extra: list[str] = field(default_factory=list)

    def line(self) -> str:
        used = "ctx —"
        if self.context is not None:
            used = f"ctx {100 * float(self.context.get('fraction', 0.0)):.0f}%"
        money = f"${self.cost:.4f}" if self.cost is not None else "$?"
        parts = [
            self.agent,
            self.model,
            used,
            f"{self.tokens[0]} in / {self.tokens[1]} out tok {money}",
            f"jobs {self.jobs}",
            f"sandbox {self.preset}",
        ]
        return " · ".join(p for p in parts if p)


@contextlib.asynccontextmanager
async def _no_watch() -> AsyncIterator[None]:
    yield


def _facts(receipt: Mapping[str, Any]) -> str:
    """A receipt's short facts (`key=value`), its bulky fields (content, diff) left to /last."""
    shown = [
        f"{key}={value}"
        for key, value in receipt.items()
        if key not in ("content", "diff", "path", "output")
        and value not in (None, False, "")
        and isinstance(value, str | int | float)
        and len(str(value)) <= 60
    ]
    return " ".join(shown) or "(see /last)"


def _receipt(content: str) -> dict[str, Any] | None:
    """A tool's JSON receipt as the model read it, shown `visible`; None when not one."""
    try:
        value = json.loads(content)
    except ValueError:
        return None
    if not isinstance(value, dict):
        return None
    shown: dict[str, Any] = visible_value(value)
    return shown


def _one_line(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: max(1, width - 1)] + "…"


class Screen(Renderer):
    def __init__(
        self,
        *,
        ask_key: KeyAsk | None,
        ask_line: Callable[[str], Awaitable[str]] | None,
        plain: bool = False,
    ) -> None:
        super().__init__(json_mode=False, ask=ask_line)
        self.plain = plain
        if plain:
            self.console = Console(
                file=self.out, highlight=False, soft_wrap=True, color_system=None, emoji=False
            )
        self.stream = StreamView(self.out, self.console, markdown=not plain)
        self.ask_key = ask_key
        self.status = Status()
        self.settings_path = "settings.json in yagent's home"
        self.suspend_keys: Callable[[], contextlib.AbstractAsyncContextManager[None]] = _no_watch
        self.results: list[tuple[str, dict[str, Any], str]] = []
        self._calls: dict[str, tuple[str, dict[str, Any], float]] = {}
        encoding = str(getattr(self.out, "encoding", "") or "").lower().replace("-", "")
        self.ascii = plain or encoding not in ("utf8", "utf8sig")
        if self.ascii and hasattr(self.out, "reconfigure"):
            self.out.reconfigure(errors="replace")  # a non-UTF-8 terminal: `?`, never a crash
        self.ok_mark, self.fail_mark, self.call_mark = (
            ("ok", "FAILED", "*") if self.ascii else ("✓", "✗", "●")
        )
        self.tree = None if plain else LiveTree(self.console, ascii=self.ascii)

    def new_turn(self) -> None:
        self.results = []
        self._calls = {}

    # -- events ------------------------------------------------------------------------
    def show(self, event: Event) -> None:
        event = visible_event(event)
        p = event.payload
        if event.delegation_id:
            super().show(event)
            return
        if event.type == "context":
            self.status.context = dict(p)
            return
        if event.type == "tool_call":
            self.stream.end_turn()
            args = arguments(p.get("arguments"))
            self._calls[str(p.get("call_id"))] = (str(p.get("name")), args, time.monotonic())
            width = max(20, self.console.width - 4 - len(str(p.get("name"))))
            key = _one_line(key_argument(args), width)
            self.console.print(
                f"[bold cyan]{self.call_mark} {escape(str(p.get('name')))}[/] {escape(key)}"
            )
            return
        if event.type == "tool_result":
            self._result(p)
            return
        super().show(event)

    def _result(self, p: Mapping[str, Any]) -> None:
        name, args, started = self._calls.pop(
            str(p.get("call_id")), (str(p.get("name")), {}, time.monotonic())
        )
        content = str(p.get("content", ""))
        self.results.append((name, args, content))
        took = time.monotonic() - started
        receipt = _receipt(content)
        lines = [_facts(receipt)] if receipt is not None else content.splitlines() or [""]
        mark = f"[green]{self.ok_mark}[/]" if p.get("ok") else f"[red]{self.fail_mark}[/]"
        kind = f"{p.get('kind')}: " if not p.get("ok") and p.get("kind") else ""
        width = max(20, self.console.width - 30)
        more = f" [dim](+{len(lines) - 1} lines, /last)[/]" if len(lines) > 1 else ""
        first = _one_line(lines[0], width)
        self.console.print(f"  {mark} {escape(name)} · {took:.1f}s · {escape(kind + first)}{more}")
        if p.get("ok") and receipt is not None and isinstance(receipt.get("diff"), str):
            self.diff(str(receipt["diff"]).splitlines())

    def diff(self, lines: list[str], *, fold: bool = True) -> None:
        """A unified diff, coloured (plain: as is), folded after `FOLD` lines unless `fold` is
        False (the person asked for all of it: `/diff`)."""
        for line in lines[:FOLD] if fold else lines:
            style = (
                "green"
                if line.startswith("+") and not line.startswith("+++")
                else "red"
                if line.startswith("-") and not line.startswith("---")
                else "cyan"
                if line.startswith("@@")
                else "bold"
                if line.startswith(("+++", "---"))
                else ""
            )
            self.console.print(Text("    " + line, style=style if not self.plain else ""))
        if fold and len(lines) > FOLD:
            self.console.print(
                f"    [dim]… {len(lines) - FOLD} more lines (/last or /diff shows them)[/]"
            )

    # -- approvals -----------------------------------------------------------------------
    async def answer(self, event: Event) -> Event:
        p = event.payload
        rid = str(p.get("request_id", ""))
        self.stream.end_turn()
        if p.get("kind") == "question" or self.ask_key is None:
            async with self.suspend_keys():
                return await super().answer(event)
        tool = str(p.get("tool"))
        args = p.get("args") if isinstance(p.get("args"), dict) else {}
        assert isinstance(args, dict)
        self.console.print(f"[bold yellow]! {escape(tool)} needs your approval[/]")
        self.console.print(f"  why: {escape(str(p.get('reason')))}", markup=True)
        self._what_happens(tool, args)
        opening = str(p.get("opening") or "")
        choices = self._opening_choices(opening) if opening else self._choices(tool, args)
        for key, (_, _, says) in choices.items():
            self.console.print(f"  [bold]{key}[/]  {escape(says)}")
        keys = {key: key for key in choices}
        try:
            async with self.suspend_keys():
                picked = await self.ask_key("allow? ", keys)
        except (KeyboardInterrupt, EOFError):
            picked = "n"
        approved, scope, says = choices[picked]
        self.console.print(f"  → {escape(says)}")
        return response(rid, approved=approved, scope=scope)

    def _what_happens(self, tool: str, args: Mapping[str, Any]) -> None:
        if isinstance(args.get("old_string"), str) and isinstance(args.get("new_string"), str):
            path = str(args.get("path", ""))
            old = str(args["old_string"]).splitlines(keepends=True)
            new = str(args["new_string"]).splitlines(keepends=True)
            shown = difflib.unified_diff(old, new, f"a/{path}", f"b/{path}")
            self.diff([line.rstrip("\n") for line in shown])
        elif isinstance(args.get("content"), str) and isinstance(args.get("path"), str):
            content = str(args["content"])  # a whole-file write, told by its arguments
            self.console.print(
                f"  writes {escape(str(args.get('path')))}: {len(content.encode())} bytes, "
                f"{content.count(chr(10)) + (0 if content.endswith(chr(10)) else 1)} lines"
            )
            self.diff(["+" + line for line in content.splitlines()])
        elif isinstance(args.get("command"), str):
            self.console.print(f"  runs: [bold]{escape(str(args['command']))}[/]")
            self.console.print(f"  in: sandbox preset {escape(self.status.preset or '?')}")
        elif isinstance(args.get("url"), str):
            self.console.print(f"  fetches: {escape(str(args['url']))}")
        else:
            given = json.dumps(dict(args), ensure_ascii=False)
            self.console.print(f"  with: {escape(_one_line(given, 300))}")

    def _opening_choices(self, opening: str) -> dict[str, tuple[bool, Scope, str]]:
        """The local-opening question (`tools.localask`): once for the session, or for good."""
        if opening.isdigit():
            opening = f"port {opening} on this machine (localhost, 127.0.0.1, [::1])"
        return {
            "y": (True, Scope.ONCE, f"yes: open {opening} for this session"),
            "a": (
                True,
                Scope.PROJECT,
                f"always: open {opening} for this project (local_openings in {self.settings_path})",
            ),
            "n": (False, Scope.ONCE, "no (the agent is told it was refused)"),
        }

    def _choices(self, tool: str, args: Mapping[str, Any]) -> dict[str, tuple[bool, Scope, str]]:
        choices: dict[str, tuple[bool, Scope, str]] = {
            "y": (True, Scope.ONCE, "yes, this call only"),
            "n": (False, Scope.ONCE, "no (the agent is told it was refused)"),
            "a": (True, Scope.TOOL, f"always allow {tool} in this session (kept in memory only)"),
            "s": (True, Scope.SESSION, "skip every question for the rest of this session (memory)"),
            "p": (
                True,
                Scope.PROJECT,
                f"trust this project for good (authorized_projects in {self.settings_path})",
            ),
        }
        if isinstance(args.get("command"), str):
            choices["r"] = (
                True,
                Scope.RULE,
                f"remember this command: an allow rule in {RULES_FILE} of this workspace",
            )
        return choices
