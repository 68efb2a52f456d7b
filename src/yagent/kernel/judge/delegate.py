"""delegate: the transport-independent contract for handing work to another executor.

Guarantees:
- Subset or refuse: an executor qualifies only when the required capabilities are a subset of
  its own; when none qualifies the delegation is refused — never "best effort", whose result
  could not tell "not done" from "not asked".
- Least capability: among qualifying executors the one with the fewest capabilities wins, ties
  broken by name — never by list order, which comes from how a configuration file happened to be
  written (one unrelated reordering would change who runs the work).
- Receipts are `completed | failed | refused` and keep their invariants when built: a completed
  receipt carries no failure reason; failed and refused ones must carry one; a refused receipt
  carries no output (nothing ran). Refused is not failed: mixing them sends the delegator off to
  fix a bug that does not exist.
- `delegate` chooses, runs, and turns the outcome into a receipt: an executor may refuse by
  raising `Refusal`; any other exception is a failure; cancellation propagates.
Leaves to the host: the wire protocol and transport, and what capabilities mean.
"""

from __future__ import annotations

import enum
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass


class DelegateError(Exception):
    """Root of this module's errors."""


class InvalidError(DelegateError, ValueError):
    """A capability, executor or receipt that breaks the contract's shape."""


class NoExecutorError(DelegateError):
    """No executor holds every required capability; `missing` says what each one lacks."""

    def __init__(self, required: frozenset[str], missing: dict[str, frozenset[str]]) -> None:
        lacks = "; ".join(f"{name} lacks {sorted(gap)}" for name, gap in sorted(missing.items()))
        super().__init__(
            f"no executor offers all of {sorted(required)} ({lacks or 'no executors'}); "
            "refusing rather than delegating a part of it"
        )
        self.required = required
        self.missing = missing


class Refusal(DelegateError):
    """Raised by an executor's run to refuse the work (it becomes a `refused` receipt)."""


def capabilities(values: Iterable[str]) -> frozenset[str]:
    """A checked capability set: non-empty, trimmed strings without inner whitespace."""
    if isinstance(values, str):
        raise InvalidError("capabilities must be a collection of names, not one string")
    found = set()
    for value in values:
        if (
            not isinstance(value, str)
            or not value.strip()
            or any(c.isspace() for c in value.strip())
        ):
            raise InvalidError(f"invalid capability {value!r}")
        found.add(value.strip())
    return frozenset(found)


@dataclass(frozen=True, slots=True)
class Executor:
    """Someone work can be delegated to, and what it can do."""

    name: str
    capabilities: frozenset[str]

    @classmethod
    def of(cls, name: str, caps: Iterable[str]) -> Executor:
        if not isinstance(name, str) or not name.strip():
            raise InvalidError(f"an executor needs a name, not {name!r}")
        return cls(name, capabilities(caps))

    def can(self, required: frozenset[str]) -> bool:
        return required <= self.capabilities


def choose(required: Iterable[str], executors: Iterable[Executor]) -> Executor:
    """The least-capable executor that holds every required capability (ties by name)."""
    needed = capabilities(required)
    listed = list(executors)
    names = [e.name for e in listed]
    if len(set(names)) != len(names):
        raise InvalidError(f"executor names must be unique: {sorted(names)}")
    able = [e for e in listed if e.can(needed)]
    if not able:
        raise NoExecutorError(needed, {e.name: needed - e.capabilities for e in listed})
    return min(able, key=lambda e: (len(e.capabilities), e.name))


class Status(enum.StrEnum):
    COMPLETED = "completed"
    FAILED = "failed"
    REFUSED = "refused"


@dataclass(frozen=True, slots=True)
class Receipt:
    """How a delegation ended. Invariants are checked when it is built."""

    status: Status
    executor: str
    output: str = ""
    reason: str = ""

    def __post_init__(self) -> None:
        status = Status(self.status)
        object.__setattr__(self, "status", status)
        if status is Status.COMPLETED and self.reason:
            raise InvalidError("a completed receipt carries no failure reason")
        if status is not Status.COMPLETED and not self.reason.strip():
            raise InvalidError(f"a {status.value} receipt must say why")
        if status is Status.REFUSED and self.output:
            raise InvalidError("a refused receipt carries no output: nothing ran")

    @classmethod
    def completed(cls, executor: str, output: str = "") -> Receipt:
        return cls(Status.COMPLETED, executor, output)

    @classmethod
    def failed(cls, executor: str, reason: str, output: str = "") -> Receipt:
        return cls(Status.FAILED, executor, output, reason)

    @classmethod
    def refused(cls, executor: str, reason: str) -> Receipt:
        return cls(Status.REFUSED, executor, "", reason)

    @property
    def ok(self) -> bool:
        return self.status is Status.COMPLETED


Run = Callable[[Executor], Awaitable[str]]


async def delegate(required: Iterable[str], executors: Iterable[Executor], run: Run) -> Receipt:
    """Choose an executor, run the work on it, and say how it ended."""
    try:
        chosen = choose(required, executors)
    except NoExecutorError as exc:
        return Receipt.refused("", str(exc))
    try:
        output = await run(chosen)
    except Refusal as exc:
        return Receipt.refused(chosen.name, str(exc) or "the executor refused without a reason")
    except Exception as exc:  # a failure of the work, reported, not raised
        return Receipt.failed(chosen.name, f"{type(exc).__name__}: {exc}")
    return Receipt.completed(chosen.name, output)
