"""A request's tokens by segment, each text counted once per run (the economy meters every request).

Contract:
- `RequestMeter.measure(system, tools, messages)` returns exactly what `budget.Meter.measure`
  returns for the segments system, tool definitions (their sorted-key JSON), history (every
  non-tool message's content and each of its calls' name + arguments) and tool results (every
  tool message's content) — the same counts, in the same order, against the same window.
- It counts only what changed since the previous request: the system prompt and the tool
  definitions when they differ (compared by identity first, then by value), and the messages
  after the longest unchanged prefix (equal messages have equal counts). The loop only appends
  between requests, so a step costs the count of its new messages, not of the whole history; a
  message replaced in place (offload, compaction) is counted again from there on.
- Given `history.Messages` views of one history (what the loop sends), it finds the unchanged
  prefix without comparing a message and keeps the view, not a copy: a request's metering does
  no work proportional to the history. Any other sequence is compared and copied as before.
Leaves to the caller: the token counter and the window (`budget`), what the messages are.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from yagent.kernel.context import budget
from yagent.llm import Message
from yagent.llm.history import Messages


class RequestMeter:
    """Per-segment token counts of a run's requests (see the module contract)."""

    def __init__(self, meter: budget.Meter, window: budget.Window) -> None:
        self._meter = meter
        self._window = window
        self._system: tuple[str, int] | None = None
        self._tools: tuple[tuple[Mapping[str, Any], ...], int] | None = None
        self._messages: Sequence[Message] = ()  # the last request's messages, as counted
        self._counts: list[tuple[int, int]] = []  # per message: (history, tool results) tokens
        self._history = 0
        self._results = 0

    def measure(
        self, system: str, tools: Sequence[Mapping[str, Any]], messages: Sequence[Message]
    ) -> budget.Usage:
        segments = (
            (budget.SYSTEM, self._system_tokens(system)),
            (budget.TOOL_DEFINITIONS, self._tool_tokens(tools)),
            *self._message_tokens(messages),
        )
        return budget.Usage(segments, self._window)

    def _system_tokens(self, system: str) -> int:
        if self._system is None or self._system[0] != system:
            self._system = (system, self._meter.count(system))
        return self._system[1]

    def _tool_tokens(self, tools: Sequence[Mapping[str, Any]]) -> int:
        defs = tuple(tools)
        if self._tools is None or self._tools[0] != defs:
            self._tools = (defs, self._meter.count(json.dumps(list(defs), sort_keys=True)))
        return self._tools[1]

    def _message_tokens(self, messages: Sequence[Message]) -> tuple[tuple[str, int], ...]:
        kept = self._unchanged(messages)
        for history, results in self._counts[kept:]:
            self._history -= history
            self._results -= results
        del self._counts[kept:]
        for message in messages[kept:]:
            counts = self._count(message)
            self._counts.append(counts)
            self._history += counts[0]
            self._results += counts[1]
        self._messages = messages if isinstance(messages, Messages) else tuple(messages)
        return ((budget.HISTORY, self._history), (budget.TOOL_RESULTS, self._results))

    def _unchanged(self, messages: Sequence[Message]) -> int:
        """How many leading messages are the ones counted last time (equal: same counts)."""
        known = self._messages
        if (
            isinstance(messages, Messages)
            and isinstance(known, Messages)
            and messages.extends(known)  # one history, only appended to since: nothing compared
        ):
            return len(known)
        size = min(len(known), len(messages))
        if tuple(messages[:size]) == tuple(known[:size]):  # identity first, item by item, in C
            return size
        for index in range(size):
            if messages[index] != known[index]:
                return index
        return size

    def _count(self, message: Message) -> tuple[int, int]:
        count = self._meter.count
        if message.role == "tool":
            return 0, count(message.content)
        calls = sum(count(c.name + c.arguments) for c in message.tool_calls)
        return count(message.content) + calls, 0
