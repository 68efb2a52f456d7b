"""Streamed model text on the terminal, through `delta`: throttled, reasoning apart from the answer.

Contract:
- Deltas of the `answer` channel are split by inline tags (`<think>…</think>` → reasoning) with
  `delta.TagSplitter`; deltas the provider marks as reasoning go to reasoning directly. All of it
  is merged and throttled by one `delta.Throttle` per turn (reasoning before answer when both
  wait), so the terminal is written at most once per `min_interval`, not once per token.
- Reasoning is shown dim, the answer plain; a change of channel starts a new line.
- `end_turn(full_text)` makes the turn's complete text authoritative when the answer came as one
  untagged segment (a retried stream's superseded deltas are then corrected: a `replace` is
  shown on a new line marked as a correction), flushes everything and starts the next turn.
- `tick()` shows what has waited long enough (the pump calls it while no event arrives).
- With `markdown` (the interactive terminal), the answer is rendered as Markdown while it streams:
  the growing block is redrawn in place (`rich.live`), and a block (up to a blank line outside a
  code fence) is printed for good once complete, the rest when the turn ends. Without it
  (one-shot runs, `--plain`) the text is written as it comes, and rich's Markdown renderer (with
  markdown-it) is never loaded: it loads with the first block drawn.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TextIO

from rich.console import Console
from rich.live import Live
from rich.text import Text

from yagent.kernel.context import delta

ANSWER = "answer"
REASONING = "reasoning"
THINK_TAG = "think"  # the inline reasoning tag some models emit (<think>…</think>)
MIN_INTERVAL = 0.05


class StreamView:
    def __init__(
        self,
        out: TextIO,
        console: Console,
        *,
        min_interval: float = MIN_INTERVAL,
        clock: delta.Clock | None = None,
        markdown: bool = False,
    ) -> None:
        self._out = out
        self._console = console
        self._interval = min_interval
        self._clock = clock
        self._channel: str | None = None  # the channel the terminal line is in, None: none
        self._markdown = markdown
        self._pending = ""  # answer text of an unfinished Markdown block
        self._live: Live | None = None  # where that block is drawn while it grows
        self._new_turn()

    def _new_turn(self) -> None:
        self._throttle = delta.Throttle(
            min_interval=self._interval, order=(REASONING, ANSWER), clock=self._clock
        )
        self._splitter = delta.TagSplitter({THINK_TAG: REASONING}, default=ANSWER)
        self._tagged = False

    @property
    def open(self) -> bool:
        """True while a line of streamed text is unfinished."""
        return self._channel is not None

    def feed(self, text: str, channel: str) -> None:
        if channel == REASONING:
            pieces = [delta.Piece(REASONING, "provider", text)]
        else:
            pieces = self._splitter.feed(text)
            self._tagged = self._tagged or any(p.segment != "0" for p in pieces)
        for piece in pieces:
            self._show(self._throttle.push(piece))

    def tick(self) -> None:
        self._show(self._throttle.poll())

    def end_turn(self, full_text: str | None = None) -> None:
        for piece in self._splitter.finish():
            self._show(self._throttle.push(piece))
        if full_text is not None and not self._tagged:
            self._show(self._throttle.push(delta.Piece(ANSWER, "0", full_text, full=True)))
        self._show(self._throttle.close())
        self.break_line()
        self._new_turn()

    def break_line(self) -> None:
        self._flush_markdown()
        if self._channel is not None and not (self._markdown and self._channel == ANSWER):
            self._out.write("\n")
            self._out.flush()
        self._channel = None

    def _flush_markdown(self, *, whole: bool = True) -> None:
        """Show the pending answer as Markdown: the unfinished block live (redrawn as it grows),
        each complete block printed for good (all of it when `whole`)."""
        if not self._pending:
            return
        cut = len(self._pending) if whole else _last_block_end(self._pending)
        if cut > 0:
            block, self._pending = self._pending[:cut], self._pending[cut:]
            self._draw(block, final=True)
        if self._pending and not whole:
            self._draw(self._pending, final=False)

    def _draw(self, text: str, *, final: bool) -> None:
        if self._live is None:
            if not text.strip():
                return
            self._live = Live(
                console=self._console, auto_refresh=False, vertical_overflow="visible"
            )
            self._live.start()
        from rich.markdown import Markdown  # loads with the first block drawn (module contract)

        self._live.update(Markdown(text.strip("\n")), refresh=True)
        if final:
            self._live.stop()
            self._live = None

    def _show(self, emits: Iterable[delta.Emit]) -> None:
        for emit in emits:
            if emit.replace:
                self.break_line()
                self._pending = ""  # superseded
                self._console.print(Text("(corrected) ", style="yellow"), end="")
            elif self._channel is not None and self._channel != emit.channel:
                self.break_line()
            if emit.channel == REASONING:
                self._console.print(Text(emit.text, style="dim"), end="")
            elif self._markdown:
                self._pending += emit.text
                self._flush_markdown(whole=False)
            else:
                self._out.write(emit.text)
                self._out.flush()
            self._channel = emit.channel


def _last_block_end(text: str) -> int:
    """Where the last complete Markdown block of `text` ends (after a blank line outside a code
    fence); 0 when no block is complete yet."""
    end, fenced, at = 0, False, 0
    for line in text.splitlines(keepends=True):
        at += len(line)
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        elif not fenced and not line.strip() and line.endswith("\n"):
            end = at
    return end
