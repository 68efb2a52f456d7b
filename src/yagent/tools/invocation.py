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
  host did not set it). The built-in executors' slots are `tools.hostservices` (the host sets
  them before any executor is loaded); `PUBLISH` is shared by every executor that reports events.
- An executor declares the slots it reads with `@needs(A, B, optional=(C,))` (`Needs`; the
  built-in executors are declared where they are named, `tools.registry`): the
  `required` ones the host must set before the run's surface is used (`missing` names what is
  not set; the host refuses to start the run then — a clear error at build time, never a `None`
  at the first call), the `optional` ones it reads when present (or fills itself). An executor
  without a declaration needs nothing.
- The executor's context holds a view of the run's services limited to what it declared
  (`Services.only`): reading or putting any other slot is an `UndeclaredServiceError` naming the
  tool and the slot. The view shares the run's values (a slot the executor fills is seen by the
  next call); scoping is always from the run's own services, never a view of a view.
- `put` replaces a slot's value; there is no removal. Hosts define their own slots for their own
  executors — this is the one extension seam of the tool context.
Left to the host: which services a run has, and asking before the first call whether its
granted tools' required services are set (`Adapter.require_services` does, with `missing`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])

Publish = Callable[[str, Mapping[str, Any]], None]
"""`(kind, payload) -> None`: the session's event publisher."""


class Slot(Generic[T]):
    """A typed key of `Services`; compared by identity. `label` is for messages only."""

    __slots__ = ("label",)

    def __init__(self, label: str) -> None:
        self.label = label

    def __repr__(self) -> str:
        return f"Slot({self.label!r})"


class UndeclaredServiceError(LookupError):
    """An executor reached for a service it did not declare with `needs`."""


class MissingServiceError(LookupError):
    """A granted tool's executor needs a service the host did not set (raised before any call)."""


@dataclass(frozen=True, slots=True)
class Needs:
    """The slots an executor reads: `required` must be set by the host, `optional` may be."""

    required: frozenset[Slot[Any]] = frozenset()
    optional: frozenset[Slot[Any]] = frozenset()

    @property
    def slots(self) -> frozenset[Slot[Any]]:
        return self.required | self.optional


NO_NEEDS = Needs()
_NEEDS_ATTR = "__yagent_needs__"


def needs(*required: Slot[Any], optional: Iterable[Slot[Any]] = ()) -> Callable[[F], F]:
    """Declare, on an executor, the services it reads (see the module contract)."""
    declared = Needs(frozenset(required), frozenset(optional))

    def mark(executor: F) -> F:
        setattr(executor, _NEEDS_ATTR, declared)
        return executor

    return mark


def declared(executor: object) -> Needs:
    """What `executor` declared with `needs` (nothing when it declared nothing)."""
    found = getattr(executor, _NEEDS_ATTR, NO_NEEDS)
    return found if isinstance(found, Needs) else NO_NEEDS


class Services:
    """The run's services, each under its typed `Slot`; or one executor's view of them."""

    __slots__ = ("_allowed", "_values", "_who")

    def __init__(self) -> None:
        self._values: dict[Slot[Any], Any] = {}
        self._allowed: frozenset[Slot[Any]] | None = None  # None: the run's own, unlimited
        self._who = ""

    def only(self, allowed: Needs, who: str) -> Services:
        """The view `who` (a tool name) gets: the same values, limited to what it declared."""
        view = Services()
        view._values = self._values
        view._allowed = allowed.slots
        view._who = who
        return view

    def missing(self, wanted: Needs) -> tuple[Slot[Any], ...]:
        """The required slots of `wanted` that are not set, by label."""
        absent = (s for s in wanted.required if s not in self._values)
        return tuple(sorted(absent, key=lambda s: s.label))

    def put(self, slot: Slot[T], value: T) -> None:
        self._values[self._check(slot)] = value

    def get(self, slot: Slot[T]) -> T | None:
        value: T | None = self._values.get(self._check(slot))
        return value

    def __contains__(self, slot: object) -> bool:
        return isinstance(slot, Slot) and self._check(slot) in self._values

    def _check(self, slot: Slot[T]) -> Slot[T]:
        if self._allowed is not None and slot not in self._allowed:
            raise UndeclaredServiceError(
                f"the executor of {self._who!r} reached for service {slot.label!r}, which it "
                "did not declare (tools.invocation.needs)"
            )
        return slot


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
