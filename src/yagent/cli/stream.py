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
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TextIO

from rich.console import Console
from rich.text import Text

from yagent.kernel import delta

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
    ) -> None:
        self._out = out
        self._console = console
        self._interval = min_interval
        self._clock = clock
        self._channel: str | None = None  # the channel the terminal line is in, None: none
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
        if self._channel is not None:
            self._out.write("\n")
            self._out.flush()
            self._channel = None

    def _show(self, emits: Iterable[delta.Emit]) -> None:
        for emit in emits:
            if emit.replace:
                self.break_line()
                self._console.print(Text("(corrected) ", style="yellow"), end="")
            elif self._channel is not None and self._channel != emit.channel:
                self.break_line()
            if emit.channel == REASONING:
                self._console.print(Text(emit.text, style="dim"), end="")
            else:
                self._out.write(emit.text)
                self._out.flush()
            self._channel = emit.channel
