"""The taskboard's status moves are one `kernel.durable.statemachine` table, and every board
obeys it:
for each status, liveness and operation, the real boards refuse exactly what `LIFECYCLE` refuses
and land where it says; a row taken out of the table is a move every board then refuses."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from yagent.kernel.durable.statemachine import Machine
from yagent.kernel.durable.taskboard import (
    LIFECYCLE,
    AlreadyClaimedError,
    ClaimRequest,
    Event,
    FinishedError,
    IllegalMoveError,
    Lease,
    LeaseExpiredError,
    MemoryBoard,
    SqliteBoard,
    Status,
    Task,
    TaskboardError,
    lifecycle,
)

pytestmark = pytest.mark.anyio
NOW = 100.0


class Frozen:
    def now(self) -> float:
        return NOW


def seeded(status: Status, live: bool) -> Task:
    if status is Status.CLAIMED:
        lease = Lease("tok", "alice", NOW + 50 if live else NOW - 1)
        return Task("t", status, owner="alice", lease=lease, attempts=1)
    return Task("t", status, result="earlier" if status is not Status.OPEN else "")


def operation(event: Event) -> Callable[[Any], Awaitable[Task]]:
    req = ClaimRequest(30)
    return {
        Event.CLAIM: lambda b: b.claim("t", "bob", req),
        Event.RENEW: lambda b: b.renew("tok", req),
        Event.RELEASE: lambda b: b.release("tok"),
        Event.COMPLETE: lambda b: b.complete("tok", "result"),
        Event.FAIL: lambda b: b.fail("tok", "reason"),
        Event.CANCEL: lambda b: b.cancel("t"),
    }[event]


CASES = [
    (status, live, event)
    for status in Status
    for live in ((True, False) if status is Status.CLAIMED else (False,))
    for event in Event
]


@pytest.fixture(params=["memory", "sqlite"])
def board(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    made = MemoryBoard() if request.param == "memory" else SqliteBoard(tmp_path / "b.db")
    made.set_clock(Frozen())
    return made


@pytest.mark.parametrize(("status", "live", "event"), CASES, ids=str)
async def test_every_board_moves_exactly_as_the_table_says(
    board: Any, status: Status, live: bool, event: Event
) -> None:
    await board.seed([seeded(status, live)])
    if not LIFECYCLE.can(status, event, live):
        with pytest.raises(TaskboardError):
            await operation(event)(board)
        assert await board.get("t") == seeded(status, live)  # a refusal changed nothing
        return
    if status is not Status.CLAIMED and event not in (Event.CLAIM, Event.CANCEL):
        pytest.fail("the table lets a token act on a task nobody has claimed")
    moved = await operation(event)(board)
    assert moved.status is LIFECYCLE.fire(status, event, live)


async def test_finished_tasks_are_never_overwritten_nor_revived(board: Any) -> None:
    await board.post("t")
    claimed = await board.claim("t", "alice", ClaimRequest(30))
    assert claimed.lease is not None
    done = await board.complete(claimed.lease.token, "the receipt")
    for event in Event:
        assert not LIFECYCLE.can(Status.DONE, event, False)
        with pytest.raises(
            FinishedError if event in (Event.CLAIM, Event.CANCEL) else TaskboardError
        ):
            await operation(event)(board)
    assert await board.get("t") == done


async def test_the_refusals_are_the_boards_typed_errors(board: Any) -> None:
    await board.seed([seeded(Status.CLAIMED, True)])
    with pytest.raises(AlreadyClaimedError):
        await board.claim("t", "bob", ClaimRequest(30))
    with pytest.raises(AlreadyClaimedError):
        await board.cancel("t")
    await board.seed([seeded(Status.CLAIMED, False)])
    with pytest.raises(LeaseExpiredError):
        await board.complete("tok", "late")
    await board.seed([seeded(Status.CANCELLED, False)])
    with pytest.raises(FinishedError):
        await board.claim("t", "bob", ClaimRequest(30))


def test_the_tables_terminal_states_are_the_status_enums() -> None:
    assert LIFECYCLE.terminal == {s for s in Status if s.terminal}
    assert LIFECYCLE.states == set(Status)


@pytest.mark.parametrize(
    ("source", "event", "seed_live"),
    [
        (Status.FAILED, Event.CLAIM, False),
        (Status.OPEN, Event.CANCEL, False),
        (Status.CLAIMED, Event.COMPLETE, True),
    ],
)
async def test_a_row_taken_out_of_the_table_is_refused_by_every_board(
    board: Any, monkeypatch: pytest.MonkeyPatch, source: Status, event: Event, seed_live: bool
) -> None:
    rows = [t for t in lifecycle.TRANSITIONS if (t.source, t.event) != (source, event)]
    terminal = (Status.DONE, Status.CANCELLED)
    monkeypatch.setattr(
        lifecycle, "LIFECYCLE", Machine(rows, initial=Status.OPEN, terminal=terminal)
    )
    await board.seed([seeded(source, seed_live)])
    with pytest.raises(IllegalMoveError, match=str(event)):
        await operation(event)(board)
    assert await board.get("t") == seeded(source, seed_live)
