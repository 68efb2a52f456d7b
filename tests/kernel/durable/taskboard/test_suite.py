"""The 8-case boardtest suite on every board, and the suite's own teeth: each case goes red on
the board mutation that breaks its clause, and it never skips."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from yagent.kernel.durable.statemachine import Machine
from yagent.kernel.durable.taskboard import (
    BoardState,
    ClaimRequest,
    Clock,
    Event,
    MemoryBoard,
    SqliteBoard,
    Status,
    Task,
    lifecycle,
    rules,
)
from yagent.kernel.durable.taskboard import store as store_module
from yagent.kernel.testing import boardtest


class TwoConnections:
    """A ClockedBoard sending each operation to the next of two SqliteBoards on one file."""

    def __init__(self, path: Path) -> None:
        self.boards = (SqliteBoard(path), SqliteBoard(path))
        self._turn = itertools.cycle(self.boards)

    def _next(self) -> SqliteBoard:
        return next(self._turn)

    def set_clock(self, clock: Clock) -> None:
        for board in self.boards:
            board.set_clock(clock)

    def close(self) -> None:
        for board in self.boards:
            board.close()

    async def seed(self, tasks: Iterable[Task]) -> None:
        await self._next().seed(tasks)

    async def post(self, task_id: str, depends_on: Iterable[str] = (), payload: str = "") -> Task:
        return await self._next().post(task_id, depends_on, payload)

    async def claim(self, task_id: str, owner: str, request: ClaimRequest) -> Task:
        return await self._next().claim(task_id, owner, request)

    async def renew(self, token: str, request: ClaimRequest) -> Task:
        return await self._next().renew(token, request)

    async def release(self, token: str) -> Task:
        return await self._next().release(token)

    async def complete(self, token: str, result: str = "") -> Task:
        return await self._next().complete(token, result)

    async def fail(self, token: str, reason: str = "") -> Task:
        return await self._next().fail(token, reason)

    async def cancel(self, task_id: str) -> Task:
        return await self._next().cancel(task_id)

    async def get(self, task_id: str) -> Task | None:
        return await self._next().get(task_id)

    async def snapshot(self) -> BoardState:
        return await self._next().snapshot()


TestMemoryBoard = boardtest.suite(lambda _: MemoryBoard(), name="MemoryBoard")
TestSqliteBoard = boardtest.suite(lambda d: SqliteBoard(d / "b.db"), name="SqliteBoard")
TestTwoConnectionsBoard = boardtest.suite(lambda d: TwoConnections(d / "b.db"), name="TwoConn")


class LeakyTokenBoard(MemoryBoard):
    """Finds a task by any token it ever minted for it (an index that never forgets)."""

    def __init__(self) -> None:
        super().__init__()
        self.ever: dict[str, str] = {}

    async def claim(self, task_id: str, owner: str, request: ClaimRequest) -> Task:
        task = await super().claim(task_id, owner, request)
        assert task.lease is not None
        self.ever[task.lease.token] = task.id
        return task

    async def _by_token(self, token: str, change: Callable[[Task | None, float], Task]) -> Task:
        task_id = self.ever.get(token)
        current = self._tasks.get(task_id) if task_id else None
        new = change(current, self._clock.now())
        self._tasks[new.id] = new
        return new


Mutant = Callable[[pytest.MonkeyPatch], None]
ORIGINAL = {name: getattr(rules, name) for name in ("claim", "held", "renew", "move")}


def _fixed_token(mp: pytest.MonkeyPatch) -> None:
    mp.setattr(store_module, "mint_token", lambda: "the-token")


def _no_liveness(mp: pytest.MonkeyPatch) -> None:
    """Claim and cancel judged as if every claim had lapsed."""

    def move(task: Any, event: Event, now: float) -> Any:
        late = event in (Event.CLAIM, Event.CANCEL)
        return ORIGINAL["move"](task, event, float("inf") if late else now)

    mp.setattr(rules, "move", move)


def _no_expiry(mp: pytest.MonkeyPatch) -> None:
    """Claims acted on by their token judged as if they never expired."""

    def move(task: Any, event: Event, now: float) -> Any:
        by_token = event not in (Event.CLAIM, Event.CANCEL)
        return ORIGINAL["move"](task, event, float("-inf") if by_token else now)

    mp.setattr(rules, "move", move)


def _renew_keeps_old_expiry(mp: pytest.MonkeyPatch) -> None:
    def renew(task: Any, token: str, ttl: float, now: float) -> Any:
        return ORIGINAL["renew"](task, token, ttl, task.lease.expires_at - ttl)

    mp.setattr(rules, "renew", renew)


def _failed_is_terminal(mp: pytest.MonkeyPatch) -> None:
    """The lifecycle table with FAILED made terminal (no move out of it)."""
    rows = [t for t in lifecycle.TRANSITIONS if t.source is not Status.FAILED]
    ends = (Status.DONE, Status.CANCELLED, Status.FAILED)
    mp.setattr(lifecycle, "LIFECYCLE", Machine(rows, initial=Status.OPEN, terminal=ends))


def _deps_ignored(mp: pytest.MonkeyPatch) -> None:
    mp.setattr(
        rules,
        "claim",
        lambda task, deps, *rest: ORIGINAL["claim"](replace(task, depends_on=()), {}, *rest),
    )


def _failed_dependency_counts_as_done(mp: pytest.MonkeyPatch) -> None:
    def claim(task: Any, deps: Any, *rest: Any) -> Any:
        done = {
            k: (replace(v, status=Status.DONE) if v and v.status is Status.FAILED else v)
            for k, v in deps.items()
        }
        return ORIGINAL["claim"](task, done, *rest)

    mp.setattr(rules, "claim", claim)


def _seed_unchecked(mp: pytest.MonkeyPatch) -> None:
    mp.setattr(store_module, "check", lambda snapshot: ())


MEMORY: Callable[[Path], Any] = lambda _: MemoryBoard()  # noqa: E731
SQLITE: Callable[[Path], Any] = lambda d: SqliteBoard(d / "b.db")  # noqa: E731


@pytest.mark.parametrize(
    ("mutant", "case", "factories"),
    [
        (_fixed_token, "token_minted_by_store", [MEMORY]),
        (_no_liveness, "concurrent_claim", [MEMORY, SQLITE]),
        (_no_liveness, "release_by_token_only", [MEMORY, SQLITE]),
        (_no_expiry, "expired_claim_taken_over", [MEMORY, SQLITE]),
        (_renew_keeps_old_expiry, "expired_claim_taken_over", [MEMORY, SQLITE]),
        (_failed_is_terminal, "failed_is_not_terminal", [MEMORY, SQLITE]),
        (_deps_ignored, "dependencies_gate_claims", [MEMORY, SQLITE]),
        (_failed_dependency_counts_as_done, "dependencies_gate_claims", [MEMORY, SQLITE]),
        (_seed_unchecked, "seed_and_check_invariants", [MEMORY, SQLITE]),
    ],
)
def test_each_case_goes_red_on_the_mutation_that_breaks_its_clause(
    mutant: Mutant,
    case: str,
    factories: list[Callable[[Path], Any]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    mutant(monkeypatch)
    for i, factory in enumerate(factories):
        scratch = tmp_path / str(i)
        scratch.mkdir()
        with pytest.raises(boardtest.ContractViolation, match=case):
            boardtest.run_case(case, factory, scratch)


@pytest.mark.parametrize("case", ["release_by_token_only", "complete_by_token_only"])
def test_a_board_judging_by_anything_but_the_current_token_goes_red(
    case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    boardtest.run_case(case, lambda _: LeakyTokenBoard(), tmp_path)  # sound rules save it
    monkeypatch.setattr(
        rules,
        "held",
        lambda task, token: ORIGINAL["held"](
            task, task.lease.token if task and task.lease else token
        ),
    )
    with pytest.raises(boardtest.ContractViolation, match=case):
        boardtest.run_case(case, lambda _: LeakyTokenBoard(), tmp_path)


def test_a_board_without_clock_and_seed_is_a_violation_never_a_skip(tmp_path: Path) -> None:
    with pytest.raises(boardtest.ContractViolation, match="not a ClockedBoard"):
        boardtest.run_case("concurrent_claim", lambda _: object(), tmp_path)  # type: ignore[arg-type,return-value]
    with pytest.raises(ValueError, match="no case named"):
        boardtest.run_case("nope", MEMORY)


def test_run_all_lists_every_failing_case(monkeypatch: pytest.MonkeyPatch) -> None:
    boardtest.run_all(MEMORY)
    _failed_is_terminal(monkeypatch)
    _seed_unchecked(monkeypatch)
    with pytest.raises(boardtest.ContractViolation, match="3 of 8 cases failed") as err:
        boardtest.run_all(MEMORY)
    assert "failed_is_not_terminal" in str(err.value)
    assert "seed_and_check_invariants" in str(err.value)


def test_the_suite_has_the_eight_named_clauses() -> None:
    assert boardtest.names() == (
        "token_minted_by_store",
        "concurrent_claim",
        "release_by_token_only",
        "complete_by_token_only",
        "failed_is_not_terminal",
        "dependencies_gate_claims",
        "expired_claim_taken_over",
        "seed_and_check_invariants",
    )
    assert len([n for n in dir(TestSqliteBoard) if n.startswith("test_")]) == 8


def test_the_fake_clock_never_runs_backwards() -> None:
    clock = boardtest.FakeClock(5)
    clock.advance(1)
    assert clock.now() == 6
    with pytest.raises(ValueError, match="backwards"):
        clock.advance(-1)
