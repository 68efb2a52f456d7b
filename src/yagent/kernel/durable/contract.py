"""contract: the only boundary between an orchestration engine and the host's run state.

Guarantees: this module is interfaces and data only — `typing.Protocol`s the host implements and
frozen dataclasses that cross the boundary. It holds no implementation, so an engine written
against it cannot depend on how or where a host keeps its state, and a host can swap storage
without touching the engine. (A test checks the module stays that way.)
The engine's view of a run:
- `RunStore` keeps a run's status; `set_status` is a compare-and-set on the status the caller
  last saw, so two engines driving one run cannot both move it.
- `StepStore` keeps each step's latest outcome; an outcome is data (status, result digest), and
  the result itself stays in the host.
- `StepRunner` runs one step for the engine; `EventSink` receives what happened, for observers.
- `Clock` is where the engine reads time, so tests move time instead of waiting.
Leaves to the host: the storage medium, table shapes, transaction boundaries, the status
vocabulary (plain strings here; `statemachine` judges moves, `commitgate` makes a terminal
status exclusive, `checkpoint` snapshots progress) and the concurrency limits of its store.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable


@dataclass(frozen=True, slots=True)
class RunRecord:
    """A run as the host stores it: `version` grows by one on every status change."""

    run_id: str
    status: str
    version: int
    plan: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class StepOutcome:
    """What a step came to: a status from the host's vocabulary and a digest of its result."""

    run_id: str
    step_id: str
    status: str
    digest: str = ""
    detail: str = ""


@dataclass(frozen=True, slots=True)
class RunEvent:
    """One observable thing that happened in a run; `seq` orders events of one run."""

    run_id: str
    seq: int
    kind: str
    step_id: str = ""
    attributes: Mapping[str, str] = field(default_factory=dict)


@runtime_checkable
class Clock(Protocol):
    """Wall-clock seconds."""

    def now(self) -> float: ...


@runtime_checkable
class RunStore(Protocol):
    """The host's record of runs."""

    async def create(self, run_id: str, plan: Sequence[str], status: str) -> RunRecord:
        """Record a new run; a run id that exists is refused (the host's error type)."""
        ...

    async def load(self, run_id: str) -> RunRecord | None: ...

    async def set_status(self, run_id: str, status: str, *, expected_version: int) -> RunRecord:
        """Move the run to `status` only if its version is still `expected_version`; otherwise
        refuse (the host's error type) and change nothing."""
        ...


@runtime_checkable
class StepStore(Protocol):
    """The host's record of step outcomes."""

    async def put(self, outcome: StepOutcome) -> None: ...

    async def get(self, run_id: str, step_id: str) -> StepOutcome | None: ...

    async def outcomes(self, run_id: str) -> Sequence[StepOutcome]:
        """Every recorded outcome of the run, in the order the steps were first recorded."""
        ...


@runtime_checkable
class StepRunner(Protocol):
    """Runs one step of a run on the engine's behalf."""

    async def run_step(self, run_id: str, step_id: str) -> StepOutcome: ...


@runtime_checkable
class EventSink(Protocol):
    """Receives run events; it must not block the engine for long (buffer or drop, and say so)."""

    async def emit(self, event: RunEvent) -> None: ...
