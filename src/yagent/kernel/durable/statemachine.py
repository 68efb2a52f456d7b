"""statemachine: conditional transitions between a step's states, as pure functions.

Guarantees: a `Machine` is a frozen table of `Transition(source, event, target, guard)`, checked
when it is built (every state known, no transition out of a terminal state, no duplicate, no
unguarded transition sharing its (source, event) with another). `fire(state, event, ctx)` returns
the next state or raises a typed `IllegalTransitionError`; it reads nothing but its arguments and
changes nothing. When several guarded transitions share a (source, event), exactly one guard must
pass — two passing guards are an `AmbiguousTransitionError`, never "the first one declared wins",
so reordering the table cannot silently change behaviour.
Refuses (fail closed): a guard that raises or returns anything but a `bool` (an `async def`
guard returns a coroutine, which is truthy) is a `GuardFailedError`, never a pass.
Leaves to the host: the vocabulary of states and events, the guards' meaning, where the current
state is stored, and who may fire what (approval risk levels are host policy). A state machine
cannot tell two concurrent branches apart: exclusivity of a terminal state is `commitgate`'s job.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

S = TypeVar("S", bound=Hashable)
E = TypeVar("E", bound=Hashable)

Guard = Callable[[Any], bool]
"""A pure predicate over the host's context value."""


class StateMachineError(Exception):
    """Root of every statemachine error."""


class DefinitionError(StateMachineError, ValueError):
    """The transition table itself is invalid; raised when the `Machine` is built."""


class UnknownStateError(StateMachineError, ValueError):
    """A state the machine was not built with."""


class IllegalTransitionError(StateMachineError):
    """`event` cannot move the machine out of `state`."""

    def __init__(self, state: object, event: object, why: str) -> None:
        super().__init__(f"no transition from {state!r} on {event!r}: {why}")
        self.state = state
        self.event = event


class TerminalStateError(IllegalTransitionError):
    """`state` is terminal: nothing leaves it."""


class GuardRejectedError(IllegalTransitionError):
    """Transitions exist for (state, event), but every guard said no."""


class GuardFailedError(IllegalTransitionError):
    """A guard raised or returned a non-bool: it could not judge, so nothing is allowed."""


class AmbiguousTransitionError(IllegalTransitionError):
    """More than one guard passed for (state, event): the table does not decide."""


@dataclass(frozen=True, slots=True)
class Transition(Generic[S, E]):
    """`event` moves `source` to `target` when `guard` (if any) holds for the context."""

    source: S
    event: E
    target: S
    guard: Guard | None = None
    name: str = ""

    def label(self) -> str:
        return self.name or f"{self.source!r} --{self.event!r}--> {self.target!r}"


class Machine(Generic[S, E]):
    """An immutable transition table with pure queries."""

    __slots__ = ("_states", "_table", "_terminal", "initial")

    def __init__(
        self,
        transitions: Iterable[Transition[S, E]],
        *,
        initial: S,
        terminal: Iterable[S],
        states: Iterable[S] = (),
    ) -> None:
        table: dict[tuple[S, E], tuple[Transition[S, E], ...]] = {}
        ends = frozenset(terminal)
        known = set(states) | {initial} | set(ends)
        for t in transitions:
            if not isinstance(t, Transition):
                raise DefinitionError(f"statemachine: expected a Transition, got {t!r}")
            known |= {t.source, t.target}
            if t.source in ends:
                raise DefinitionError(f"statemachine: {t.label()} leaves terminal {t.source!r}")
            same = table.get((t.source, t.event), ())
            if t in same:
                raise DefinitionError(f"statemachine: duplicate transition {t.label()}")
            if same and (t.guard is None or any(o.guard is None for o in same)):
                raise DefinitionError(
                    f"statemachine: {t.label()} shares ({t.source!r}, {t.event!r}) with another "
                    f"transition; each of them needs a guard"
                )
            table[(t.source, t.event)] = (*same, t)
        if initial in ends:
            raise DefinitionError(f"statemachine: initial state {initial!r} is terminal")
        self.initial = initial
        self._states = frozenset(known)
        self._terminal = ends
        self._table = table

    @property
    def states(self) -> frozenset[S]:
        return self._states

    @property
    def terminal(self) -> frozenset[S]:
        return self._terminal

    def is_terminal(self, state: S) -> bool:
        return self._known(state) in self._terminal

    def fire(self, state: S, event: E, ctx: object = None) -> S:
        """The state `event` leads to from `state` given `ctx`; raises if the move is illegal."""
        return self._choose(state, event, ctx).target

    def transition(self, state: S, event: E, ctx: object = None) -> Transition[S, E]:
        """The one transition `fire` would take (for hosts that log which rule moved a step)."""
        return self._choose(state, event, ctx)

    def can(self, state: S, event: E, ctx: object = None) -> bool:
        """Whether `fire` would succeed. A guard that cannot judge answers False."""
        try:
            self._choose(state, event, ctx)
        except IllegalTransitionError:
            return False
        return True

    def allowed(self, state: S, ctx: object = None) -> tuple[E, ...]:
        """The events `fire` would accept from `state`, in declaration order."""
        events = dict.fromkeys(e for (s, e) in self._table if s == self._known(state))
        return tuple(e for e in events if self.can(state, e, ctx))

    def _known(self, state: S) -> S:
        if state not in self._states:
            raise UnknownStateError(f"statemachine: unknown state {state!r}")
        return state

    def _choose(self, state: S, event: E, ctx: object) -> Transition[S, E]:
        if self._known(state) in self._terminal:
            raise TerminalStateError(state, event, "the state is terminal")
        candidates = self._table.get((state, event), ())
        if not candidates:
            raise IllegalTransitionError(state, event, "the table has none")
        passed = [t for t in candidates if _judge(t, state, event, ctx)]
        if not passed:
            raise GuardRejectedError(state, event, "every guard rejected it")
        if len(passed) > 1:
            names = ", ".join(t.label() for t in passed)
            raise AmbiguousTransitionError(state, event, f"several guards passed ({names})")
        return passed[0]


def _judge(t: Transition[Any, Any], state: object, event: object, ctx: object) -> bool:
    if t.guard is None:
        return True
    try:
        verdict = t.guard(ctx)
    except Exception as exc:
        raise GuardFailedError(state, event, f"guard of {t.label()} raised {exc!r}") from exc
    if not isinstance(verdict, bool):
        close = getattr(verdict, "close", None)
        if callable(close):
            close()  # a coroutine from an async guard: close it instead of leaking a warning
        raise GuardFailedError(
            state, event, f"guard of {t.label()} returned {type(verdict).__name__}, not bool"
        )
    return verdict
