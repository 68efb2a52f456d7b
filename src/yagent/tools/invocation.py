"""Per-call data and run-wide services for executors: `Invocation` and typed `Services` slots.

Contract:
- `Invocation` is one tool call as its executor sees it: call id, tool name, the parsed
  arguments, the caller (`run_program` for a program's host calls) and the nesting depth. The
  adapter makes one per call and hands the executor a context whose `call` is that invocation
  (`ToolContext.for_call`), so calls that run in parallel each read their own — nothing per-call
  is ever written into the run-wide context.
- `Services` holds what the host sets once per run (the event publisher, the delegation runner,
  the session reader…) under typed `Slot` keys. A slot is an object, not a string: two slots with
  the same label are different keys, and `get` returns the slot's declared type (`None` when the
  host did not set it — the executor then refuses or degrades visibly, as its own contract says).
  A slot is declared next to the executor that reads it; `PUBLISH` is shared by every executor
  that reports events.
- `put` replaces a slot's value; there is no removal. Hosts define their own slots for their own
  executors — this is the one extension seam of the tool context.
Left to the host: which services a run has. Not offered: a per-executor declaration that limits
what it may read (every executor of a run sees the same `Services`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

T = TypeVar("T")

Publish = Callable[[str, Mapping[str, Any]], None]
"""`(kind, payload) -> None`: the session's event publisher."""


class Slot(Generic[T]):
    """A typed key of `Services`; compared by identity. `label` is for messages only."""

    __slots__ = ("label",)

    def __init__(self, label: str) -> None:
        self.label = label

    def __repr__(self) -> str:
        return f"Slot({self.label!r})"


class Services:
    """The run's services, each under its typed `Slot`."""

    __slots__ = ("_values",)

    def __init__(self) -> None:
        self._values: dict[Slot[Any], Any] = {}

    def put(self, slot: Slot[T], value: T) -> None:
        self._values[slot] = value

    def get(self, slot: Slot[T]) -> T | None:
        value: T | None = self._values.get(slot)
        return value

    def __contains__(self, slot: object) -> bool:
        return slot in self._values


@dataclass(frozen=True, slots=True)
class Invocation:
    """One tool call as its executor sees it (empty outside a call)."""

    call_id: str = ""
    tool: str = ""
    args: Mapping[str, Any] = field(default_factory=dict)
    caller: str = ""
    depth: int = 0


PUBLISH: Slot[Publish] = Slot("publish")
"""The session's event publisher (egress, progress, elicitation events reach the rollout)."""

NO_CALL = Invocation()
