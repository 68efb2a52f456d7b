"""boardtest: the shared contract suite every `taskboard.Board` implementation runs.

Guarantees: eight cases, each a named clause of the taskboard contract, so a board that breaks
one goes red on exactly that clause: token minted by the store / concurrent claim (exactly one
winner, contenders started together) / release by token only / complete by token only / failed
is not terminal / dependencies gate claims / an expired claim can be taken over (renew keeps the
token) / seed and check hold the invariants. The clock is injected through
`ClockedBoard.set_clock` and moved by the cases, so expiry really happens.
Refuses: skipping. Plugging a board into the suite declares it meets the contract; a board that
cannot run a case (no injectable clock, no seed) is a failure, never a skip.
Leaves to the host: the board factory (`factory(scratch_dir) -> ClockedBoard`, fresh and empty per
case) and, for boards shared across processes, a multi-process race of its own. With pytest:

    TestSqliteBoard = boardtest.suite(lambda d: SqliteBoard(d / "b.db"), name="SqliteBoard")

or `boardtest.run_all(factory)` / `boardtest.run_case(name, factory)` anywhere else.
"""

from __future__ import annotations

from pathlib import Path

from yagent.kernel.testing.boardtest import harness
from yagent.kernel.testing.boardtest.cases import CASES
from yagent.kernel.testing.boardtest.harness import (
    REQUEST,
    TTL,
    BoardFactory,
    Case,
    ContractViolation,
    FakeClock,
)


def names() -> tuple[str, ...]:
    return tuple(case.name for case in CASES)


def run_case(case: Case | str, factory: BoardFactory, scratch: Path | None = None) -> None:
    """Run one case (by value or name) on a fresh board; `ContractViolation` on failure."""
    harness.run_case(case, factory, scratch, cases=CASES)


def run_all(factory: BoardFactory) -> None:
    """Run all eight cases; one `ContractViolation` lists every case that failed."""
    harness.run_all(factory, cases=CASES)


def suite(factory: BoardFactory, *, name: str = "TaskboardContract") -> type:
    """A pytest-collectable class with one `test_<case>` method per case."""
    return harness.suite(factory, cases=CASES, name=name)


__all__ = [
    "CASES",
    "REQUEST",
    "TTL",
    "BoardFactory",
    "Case",
    "ContractViolation",
    "FakeClock",
    "names",
    "run_all",
    "run_case",
    "suite",
]
