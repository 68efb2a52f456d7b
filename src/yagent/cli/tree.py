"""Delegations as a live tree on the terminal: one row per delegation — name, agent, state,
elapsed time, last action — nested under the delegation that started it.

Contract:
- `Delegations.update(event)` takes the events of delegations (`delegation_start`, their own
  `tool_call` / `tool_result` / `assistant_turn` / `run_end`, and `delegation_receipt`) and
  returns whether the event was one of them. A row is `running` from its start until its
  receipt says `completed`, `failed` or `refused` (or, with no receipt yet, its own `run_end`
  says how the run ended); its elapsed time stops there. A failed or refused row's last action
  is the receipt's reason.
- `lines(now, width)` is the tree as text: a header (how many delegations, how many running),
  then the rows depth-first in start order, children under their parent (`parent_delegation_id`),
  every line cut to `width` with a visible `…`. `ascii` marks and branches for terminals that cannot
  show others.
- `LiveTree` draws it in place under the scrolling output (`rich.live`) from the first
  delegation on, redrawn on each update and at most `REFRESH` times a second on `tick` (the
  elapsed times move); `stop` prints the final tree for good. Without a terminal (pipes, `--json`,
  `--plain`) the host does not use it: the per-delegation lines say the same.
Leaves to the host: feeding it events and ticks, and stopping it when the run ends.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console
from rich.live import Live
from rich.text import Text

from yagent.cli.calls import arguments, key_argument
from yagent.messaging import Event

REFRESH = 4.0
MARKS = {"running": "●", "completed": "✓", "failed": "✗", "refused": "⊘"}
ASCII_MARKS = {"running": "*", "completed": "ok", "failed": "X", "refused": "-"}
STYLES = {"running": "cyan", "completed": "green", "failed": "red", "refused": "yellow"}
ENDED = {"finished": "completed", "answered": "completed"}  # a run_end status, as a state


@dataclass
class Row:
    delegation_id: str
    name: str
    agent: str
    parent: str
    started: float
    ended: float | None = None
    state: str = "running"
    last: str = ""
    children: list[str] = field(default_factory=list)


class Delegations:
    def __init__(self, clock: Callable[[], float] = time.monotonic, *, ascii: bool = False):
        self._clock = clock
        self._rows: dict[str, Row] = {}
        self._ascii = ascii

    def __bool__(self) -> bool:
        return bool(self._rows)

    @property
    def running(self) -> int:
        return sum(1 for row in self._rows.values() if row.state == "running")

    def update(self, event: Event) -> bool:
        p = event.payload
        lane = event.delegation_id or str(p.get("delegation_id", ""))
        if not lane:
            return False
        if event.type == "delegation_start":
            self._start(lane, p)
            return True
        row = self._rows.get(lane)
        if row is None:
            return False
        if event.type == "tool_call":
            row.last = f"{p.get('name')} {key_argument(arguments(p.get('arguments')))}".strip()
        elif event.type == "tool_result":
            row.last = f"{p.get('name')} {'ok' if p.get('ok') else 'failed'}"
        elif event.type == "assistant_turn" and str(p.get("text", "")).strip():
            row.last = "replied: " + " ".join(str(p.get("text")).split())
        elif event.type == "delegation_receipt":
            receipt = p.get("receipt") if isinstance(p.get("receipt"), Mapping) else {}
            assert isinstance(receipt, Mapping)
            self._end(row, str(receipt.get("status", "failed")), str(receipt.get("reason", "")))
        elif event.type == "run_end" and row.state == "running":
            status = str(p.get("status", ""))
            self._end(row, ENDED.get(status, "failed"), str(p.get("error") or status))
        return True

    def _start(self, lane: str, p: Mapping[str, Any]) -> None:
        parent = str(p.get("parent_delegation_id", ""))
        name = str(p.get("name") or lane.split("@", 1)[0])
        row = Row(lane, name, str(p.get("agent", "")), parent, self._clock(), last="started")
        if lane not in self._rows and parent in self._rows:
            self._rows[parent].children.append(lane)
        self._rows[lane] = row

    def _end(self, row: Row, state: str, reason: str) -> None:
        row.state = state if state in MARKS else "failed"
        row.ended = self._clock()
        if row.state != "completed" and reason:
            row.last = reason

    def lines(self, width: int) -> list[Text]:
        now = self._clock()
        head = Text(f"delegations · {len(self._rows)} · {self.running} running", style="bold")
        head.truncate(max(10, width), overflow="ellipsis")
        out = [head]
        tops = [r for r in self._rows.values() if r.parent not in self._rows]
        self._branch(tops, "", now, width, out)
        return out

    def _branch(
        self, rows: list[Row], indent: str, now: float, width: int, out: list[Text]
    ) -> None:
        fork, last_fork, bar = ("|-", "`-", "|  ") if self._ascii else ("├─", "└─", "│  ")
        for i, row in enumerate(rows):
            end = i == len(rows) - 1
            marks = ASCII_MARKS if self._ascii else MARKS
            took = (row.ended if row.ended is not None else now) - row.started
            line = Text(f"{indent}{last_fork if end else fork} ")
            line.append(marks[row.state], style=STYLES[row.state])
            line.append(f" {row.name} ({row.agent}) {row.state} {took:.0f}s")
            if row.last:
                line.append(f" · {' '.join(row.last.split())}", style="dim")
            line.truncate(max(10, width), overflow="ellipsis")
            out.append(line)
            children = [self._rows[c] for c in row.children]
            self._branch(children, indent + ("   " if end else bar), now, width, out)


class LiveTree:
    """`Delegations` drawn in place (see the module contract)."""

    def __init__(self, console: Console, *, ascii: bool = False) -> None:
        self.tree = Delegations(ascii=ascii)
        self._console = console
        self._live: Live | None = None
        self._drawn = 0.0

    def update(self, event: Event) -> bool:
        if not self.tree.update(event):
            return False
        if self._live is None:
            self._live = Live(console=self._console, auto_refresh=False, transient=True)
            self._live.start()
        self._draw()
        return True

    def tick(self) -> None:
        if self._live is not None and time.monotonic() - self._drawn >= 1 / REFRESH:
            self._draw()

    def _draw(self) -> None:
        assert self._live is not None
        self._live.update(Text("\n").join(self.tree.lines(self._console.width)), refresh=True)
        self._drawn = time.monotonic()

    def stop(self) -> None:
        """The final tree, printed for good (nothing when no delegation was seen)."""
        if self._live is None:
            return
        self._live.stop()
        self._live = None
        for line in self.tree.lines(self._console.width):
            self._console.print(line)
