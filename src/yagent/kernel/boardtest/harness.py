"""boardtest harness: the fake clock, the assertions and the ways a host runs the cases.

Contract: a case fails by raising `ContractViolation` (an `AssertionError` that survives `python
-O`); nothing here ever skips. A board that is not a `ClockedBoard` (no injectable clock, no
`seed`) is itself a violation — its expiry clauses could not be checked. A taskboard error
escaping a case (an operation the contract accepts was refused) is a violation too. Each case
gets a fresh board from the host's factory, given a scratch directory of its own; the board is
closed afterwards when it has a `close()`.
"""

from __future__ import annotations

import tempfile
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

from yagent.kernel.clock import FakeClock as FakeClock
from yagent.kernel.taskboard import ClaimRequest, ClockedBoard, Task, TaskboardError

TTL = 10.0
REQUEST = ClaimRequest(TTL)
START = 1_000_000.0

BoardFactory = Callable[[Path], ClockedBoard]
"""Gives a fresh, empty board; the path is a scratch directory owned by this one case."""


class ContractViolation(AssertionError):
    """A board broke the taskboard contract; the message names the case and the clause."""


CaseFn = Callable[[ClockedBoard, FakeClock], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class Case:
    """One named clause of the contract."""

    name: str
    fn: CaseFn


def expect(condition: bool, message: str) -> None:
    if not condition:
        raise ContractViolation(message)


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


def _named(case: Case | str, cases: Sequence[Case]) -> Case:
    if isinstance(case, Case):
        return case
    for known in cases:
        if known.name == case:
            return known
    raise ValueError(f"boardtest: no case named {case!r}")


def run_case(
    case: Case | str, factory: BoardFactory, scratch: Path | None, *, cases: Sequence[Case]
) -> None:
    """Run one case on a fresh board; raises `ContractViolation` naming the case on failure."""
    chosen = _named(case, cases)
    if scratch is None:
        with tempfile.TemporaryDirectory(prefix="boardtest-") as tmp:
            run_case(chosen, factory, Path(tmp), cases=cases)
        return
    board = factory(scratch)
    try:
        if not isinstance(board, ClockedBoard):
            raise ContractViolation(
                f"{type(board).__name__} is not a ClockedBoard: without an injected clock and "
                f"seed the expiry clauses cannot be checked"
            )
        clock = FakeClock()
        board.set_clock(clock)
        try:
            anyio.run(chosen.fn, board, clock)
        except TaskboardError as exc:
            raise ContractViolation(f"an operation the contract accepts raised {exc!r}") from exc
    except ContractViolation as exc:
        raise ContractViolation(f"boardtest {chosen.name}: {exc}") from exc
    finally:
        close = getattr(board, "close", None)
        if callable(close):
            close()


def run_all(factory: BoardFactory, *, cases: Sequence[Case]) -> None:
    """Run every case (all of them, not up to the first failure); one violation lists them all."""
    failures: list[str] = []
    for case in cases:
        try:
            run_case(case, factory, None, cases=cases)
        except ContractViolation as exc:
            failures.append(str(exc))
    if failures:
        raise ContractViolation(
            f"{len(failures)} of {len(cases)} cases failed:\n" + "\n".join(failures)
        )


def suite(factory: BoardFactory, *, cases: Sequence[Case], name: str) -> type:
    """A test class with one `test_<case>` method per case, for pytest to collect."""
    namespace: dict[str, object] = {"__doc__": f"The taskboard contract suite on {name}."}
    for case in cases:
        namespace[f"test_{case.name}"] = _method(case, factory, cases)
    return type(f"Test{name}", (), namespace)


def _method(case: Case, factory: BoardFactory, cases: Sequence[Case]) -> Callable[..., None]:
    def test(self: object, tmp_path: Path) -> None:
        run_case(case, factory, tmp_path, cases=cases)

    test.__name__ = f"test_{case.name}"
    test.__doc__ = case.name.replace("_", " ")
    return test
