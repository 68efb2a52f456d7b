"""boardtest harness: the fake clock, the assertions and the ways a host runs the cases.

Contract: a case fails by raising `ContractViolation` (an `AssertionError` that survives `python
-O`); nothing here ever skips. A board that is not a `ClockedBoard` (no injectable clock, no
`seed`) is itself a violation — its expiry clauses could not be checked. A taskboard error
escaping a case (an operation the contract accepts was refused) is a violation too. Each case
gets a fresh board from the host's factory, given a scratch directory of its own; the board is
closed afterwards when it has a `close()`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from yagent.kernel.durable.clock import FakeClock as FakeClock
from yagent.kernel.durable.taskboard import ClaimRequest, ClockedBoard, Task, TaskboardError
from yagent.kernel.testing import contractsuite
from yagent.kernel.testing.contractsuite import Case as Case
from yagent.kernel.testing.contractsuite import ContractViolation as ContractViolation
from yagent.kernel.testing.contractsuite import expect as expect

TTL = 10.0
REQUEST = ClaimRequest(TTL)
START = 1_000_000.0

BoardFactory = Callable[[Path], ClockedBoard]
"""Gives a fresh, empty board; the path is a scratch directory owned by this one case."""


CaseFn = Callable[[ClockedBoard, FakeClock], Awaitable[None]]


async def refused(what: str, call: Awaitable[Any], kind: type[TaskboardError]) -> TaskboardError:
    """Insist that a board operation is refused with `kind`; returns the error."""
    try:
        await call
    except kind as exc:
        return exc
    except TaskboardError as exc:
        raise ContractViolation(f"{what}: refused with {exc!r}, want {kind.__name__}") from exc
    raise ContractViolation(f"{what} was accepted; the contract refuses it ({kind.__name__})")


async def claimed(board: ClockedBoard, task_id: str, owner: str) -> tuple[Task, str]:
    """Claim and insist on a well-formed claim; returns the task and its store-minted token."""
    task = await board.claim(task_id, owner, REQUEST)
    lease = task.lease
    if lease is None or not lease.token:
        raise ContractViolation(f"a claim of {task_id!r} returned no token: {task}")
    expect(
        (task.id, task.status.value, task.owner, lease.owner) == (task_id, "claimed", owner, owner),
        f"a claim of {task_id!r} by {owner} returned {task}",
    )
    return task, lease.token


def _start(board: ClockedBoard) -> tuple[ClockedBoard, FakeClock]:
    if not isinstance(board, ClockedBoard):
        raise ContractViolation(
            f"{type(board).__name__} is not a ClockedBoard: without an injected clock and "
            f"seed the expiry clauses cannot be checked"
        )
    clock = FakeClock()
    board.set_clock(clock)
    return board, clock


def run_case(
    case: Case | str, factory: BoardFactory, scratch: Path | None, *, cases: Sequence[Case]
) -> None:
    """Run one case on a fresh board; raises `ContractViolation` naming the case on failure."""
    chosen = contractsuite.named("boardtest", case, cases)
    contractsuite.run_case("boardtest", chosen, factory, scratch, _start, TaskboardError)


def run_all(factory: BoardFactory, *, cases: Sequence[Case]) -> None:
    """Run every case (all of them, not up to the first failure); one violation lists them all."""
    contractsuite.run_all(lambda case: run_case(case, factory, None, cases=cases), cases)


def suite(factory: BoardFactory, *, cases: Sequence[Case], name: str) -> type:
    """A test class with one `test_<case>` method per case, for pytest to collect."""
    return contractsuite.pytest_class(
        name,
        f"The taskboard contract suite on {name}.",
        cases,
        lambda case, tmp: run_case(case, factory, tmp, cases=cases),
    )
