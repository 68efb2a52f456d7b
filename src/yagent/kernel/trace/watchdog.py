"""watchdog: passive tool-call pairing invariants, judged when a step closes.

Guarantees: when a step closes (the next step of its lane starts, its lane ends, the turn ends,
or the host closes it), the watchdog reports each call the step declared that never started
executing (`declared_not_executed`) and each result that arrived for a call no step of the turn
declared (`result_without_declaration`). A call whose parent is itself an executing call (a
nested call, e.g. a program's host call) counts as declared by that parent. A result that
arrives after its step already closed is judged at once. Each finding is reported once, is
returned to the caller and kept in `findings`.
Refuses: nothing, and decides nothing — it only warns. The decisions on the hot path (refusing a
call, ending a run) belong to the guards and the loop; the watchdog must never become one.
Leaves to the host: what to do with a warning (record it, show it, export it), and where a step
closes when its stream has no step starts (`close_step` / `close_scope` / `close_all`).
State is per turn: `observe` resets it at a turn end, so call ids may repeat across turns. Of a
closed step only its id is kept: closing what is open (`close_all`, `close_scope`, a turn end)
costs what is open, not the number of steps the turn has had.
`observe` reads only the `PAIRING` fields of a signal (kind, row, parent, scope, declares): a host
that keeps no rows can feed it `RuleBook.pairing`'s `PairingSignal`s, which carry nothing else.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass, field

from yagent.kernel.trace.trajectory.vocabulary import Kind, PairingSignal, Signal

PAIRING = frozenset(PairingSignal._fields)
"""The fields of a `Signal` that `Watchdog.observe` reads (tested: it reads no other)."""


class FindingKind(enum.StrEnum):
    DECLARED_NOT_EXECUTED = "declared_not_executed"
    RESULT_WITHOUT_DECLARATION = "result_without_declaration"


@dataclass(frozen=True, slots=True)
class Finding:
    """A broken pairing invariant: `call` in `step` (the step being closed when it was found;
    "" when a result arrived with no step to judge it in), in lane `scope`."""

    kind: FindingKind
    step: str
    call: str
    scope: str = ""

    @property
    def message(self) -> str:
        if self.kind is FindingKind.DECLARED_NOT_EXECUTED:
            return f"call {self.call} was declared by {self.step or 'a step'} but never executed"
        return f"result for {self.call} arrived but no step declared that call"

    def to_dict(self) -> dict[str, str]:
        return {
            "kind": self.kind.value,
            "step": self.step,
            "call": self.call,
            "scope": self.scope,
            "message": self.message,
        }


@dataclass
class _Step:
    scope: str
    declared: list[str] = field(default_factory=list)
    results: list[str] = field(default_factory=list)


class Watchdog:
    """Watches one turn's calls; findings come back from the call that closed the step."""

    def __init__(self) -> None:
        self._steps: dict[str, _Step] = {}  # the open steps
        self._closed: set[str] = set()  # the steps closed this turn (their state is dropped)
        self._open: dict[str, str] = {}  # lane → its open step
        self._declared: set[str] = set()
        self._executed: set[str] = set()
        self._reported: set[tuple[FindingKind, str]] = set()
        self._findings: list[Finding] = []

    @property
    def findings(self) -> tuple[Finding, ...]:
        return tuple(self._findings)

    def _step(self, step: str, scope: str) -> _Step | None:
        """The open step's state (opened when first seen); None when it has closed."""
        if step in self._closed:
            return None
        state = self._steps.get(step)
        if state is None:
            state = self._steps[step] = _Step(scope)
            self._open.setdefault(scope, step)
        return state

    def open_step(self, step: str, scope: str = "") -> tuple[Finding, ...]:
        """A step of `scope` starts: the lane's previous open step closes."""
        previous = self._open.get(scope)
        found = self.close_step(previous) if previous is not None and previous != step else ()
        self._step(step, scope)
        self._open[scope] = step
        return found

    def declare(self, step: str, calls: Iterable[str], scope: str = "") -> None:
        state = self._step(step, scope)
        for call in calls:
            self._declared.add(call)
            if state is not None:
                state.declared.append(call)

    def executed(self, call: str) -> None:
        self._executed.add(call)

    def result(self, call: str, step: str | None = None, scope: str = "") -> tuple[Finding, ...]:
        """A result arrived: judged when its step closes, or at once when that step has already
        closed or there is no step to wait for (none named, none open in the lane)."""
        step = step if step is not None else self._open.get(scope)
        if step is None:
            return self._check_result(call, "", scope)
        state = self._step(step, scope)
        if state is None:
            return self._check_result(call, step, scope)
        state.results.append(call)
        return ()

    def close_step(self, step: str) -> tuple[Finding, ...]:
        state = self._steps.pop(step, None)
        if state is None:
            return ()
        self._closed.add(step)
        if self._open.get(state.scope) == step:
            del self._open[state.scope]
        found: list[Finding] = []
        for call in state.declared:
            if call not in self._executed:
                found.extend(
                    self._report(FindingKind.DECLARED_NOT_EXECUTED, step, call, state.scope)
                )
        for call in state.results:
            found.extend(self._check_result(call, step, state.scope))
        return tuple(found)

    def close_scope(self, scope: str) -> tuple[Finding, ...]:
        steps = [s for s, state in self._steps.items() if state.scope == scope]
        return tuple(f for s in steps for f in self.close_step(s))

    def close_all(self) -> tuple[Finding, ...]:
        return tuple(f for s in list(self._steps) for f in self.close_step(s))

    def reset(self) -> tuple[Finding, ...]:
        """Close everything, then forget the turn (the findings list stays)."""
        found = self.close_all()
        self._steps.clear()
        self._closed.clear()
        self._open.clear()
        self._declared.clear()
        self._executed.clear()
        self._reported.clear()
        return found

    def _check_result(self, call: str, step: str, scope: str) -> tuple[Finding, ...]:
        if call in self._declared:
            return ()
        return self._report(FindingKind.RESULT_WITHOUT_DECLARATION, step, call, scope)

    def _report(self, kind: FindingKind, step: str, call: str, scope: str) -> tuple[Finding, ...]:
        if (kind, call) in self._reported:
            return ()
        self._reported.add((kind, call))
        finding = Finding(kind, step, call, scope)
        self._findings.append(finding)
        return (finding,)

    def observe(self, signal: Signal | PairingSignal) -> tuple[Finding, ...]:
        """Drive the watchdog with the trajectory's generic signals."""
        kind, row, scope = signal.kind, signal.row, signal.scope
        if kind is Kind.TURN_END:
            return self.reset()
        if kind is Kind.SPAN_END:
            return self.close_scope(scope)
        if row is None:
            return ()
        if kind is Kind.STEP_START:
            return self.open_step(row, scope)
        if kind is Kind.STEP_END:
            self.declare(row, signal.declares, scope)
        elif kind is Kind.CALL:
            if signal.parent is not None and signal.parent in self._executed:
                # A nested call, made by a call that is executing (a program's host call): the
                # running parent is what declared it.
                self._declared.add(row)
            self.executed(row)
        elif kind is Kind.RESULT:
            return self.result(row, signal.parent, scope)
        return ()
