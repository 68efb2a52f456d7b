"""taskboard race: run concurrent claims of one task and judge the result, not the mechanism.

The board guarantees claim atomicity (a lock, a transaction, a compare-and-set — its business);
this package only checks the outcome: `concurrent_claim` starts every contender at once and
reports who won and who was refused. Exactly one winner is the contract (`Race.exactly_one`).
A contender failing with anything but a `ClaimError` (a backend failure) is not a refusal: it
propagates, so a broken store cannot pass for a contended one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import anyio

from yagent.kernel.durable.taskboard.store import Board
from yagent.kernel.durable.taskboard.types import (
    ClaimError,
    ClaimRequest,
    InvalidArgumentError,
    Task,
)


@dataclass(frozen=True, slots=True)
class Race:
    """Who won the claim (`winners`, normally one) and who was refused, and why."""

    winners: tuple[Task, ...]
    refused: tuple[tuple[str, ClaimError], ...]

    @property
    def exactly_one(self) -> bool:
        return len(self.winners) == 1


async def concurrent_claim(
    board: Board | Sequence[Board], task_id: str, owners: Sequence[str], request: ClaimRequest
) -> Race:
    """Claim `task_id` once per owner, all at once; contender i uses board i mod len(boards)
    (pass several connections to one store to race across them)."""
    boards = list(board) if isinstance(board, Sequence) else [board]
    if not boards or len(owners) < 2:
        raise InvalidArgumentError("taskboard: a race needs a board and at least two owners")
    winners: list[Task] = []
    refused: list[tuple[str, ClaimError]] = []
    start = anyio.Event()

    async def contend(i: int, owner: str) -> None:
        await start.wait()
        try:
            winners.append(await boards[i % len(boards)].claim(task_id, owner, request))
        except ClaimError as exc:
            refused.append((owner, exc))

    async with anyio.create_task_group() as tg:
        for i, owner in enumerate(owners):
            tg.start_soon(contend, i, owner)
        start.set()  # contenders started later find it set: all run in the same round
    return Race(tuple(winners), tuple(refused))
