"""What the engines' body encoders share: JSON as it goes on the wire, and the conversations
encoded so far, so that a step encodes its new messages rather than the history.

Contract:
- `to_json(value)` is the JSON text that httpx's `json=` and the `anthropic` SDK send for plain
  JSON data (dicts, lists, strings, numbers, booleans, None): compact separators, UTF-8 left
  unescaped, NaN and infinities refused with `ValueError`.
- `Conversations(start)` keeps one encoding state for each of the last `CONVERSATIONS` history
  views it was asked about (each agent of a run asks with its own). `advance(messages, add)`
  returns the state that has taken in exactly `messages`: when `messages` is a
  `history.Messages` view extending a remembered one, `add(state, new)` is given only the
  messages appended since; otherwise a fresh `start()` state is given them all. Another view (a
  rewritten history, a new run) is then remembered in place of the least recently used one; a
  sequence that is not a view (a tuple) is never remembered — nothing says what a later request
  extends. A state whose `add` raised is forgotten, never left half-advanced.
- The states and the views they hold stay in memory as long as the `Conversations` does: up to
  `CONVERSATIONS` histories (one store each, shared with the run that grows it).
Leaves to the encoders: what a state is and how a message is encoded.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

from yagent.llm.history import Messages
from yagent.llm.types import Message

__all__ = ["CONVERSATIONS", "Conversations", "to_json"]

CONVERSATIONS = 8  # conversations an encoder keeps encoded (a run's agents ask through one engine)

to_json: Callable[[Any], str] = json.JSONEncoder(
    ensure_ascii=False, separators=(",", ":"), allow_nan=False
).encode

State = TypeVar("State")


class Conversations(Generic[State]):
    """The encoding states of the last `CONVERSATIONS` views (module contract)."""

    __slots__ = ("_remembered", "_start")

    def __init__(self, start: Callable[[], State]) -> None:
        self._start = start
        self._remembered: list[tuple[Messages, State]] = []  # most recently used last

    def advance(
        self, messages: Sequence[Message], add: Callable[[State, Sequence[Message]], None]
    ) -> State:
        if not isinstance(messages, Messages):  # nothing says what it extends: taken in whole
            state = self._start()
            add(state, messages)
            return state
        found = next((i for i, (v, _) in enumerate(self._remembered) if messages.extends(v)), None)
        if found is None:
            state = self._start()
            add(state, messages)
            if len(self._remembered) >= CONVERSATIONS:
                del self._remembered[0]
        else:
            view, state = self._remembered.pop(found)  # forgotten if `add` raises below
            add(state, messages[len(view) :])  # only what was appended since
        self._remembered.append((messages, state))
        return state
