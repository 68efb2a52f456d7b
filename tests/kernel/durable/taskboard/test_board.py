"""Boards beyond the suite: argument checks, persistence, unreadable rows, the race helper, and
claims racing across real processes on one SQLite file."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from yagent.kernel.durable.taskboard import (
    AlreadyClaimedError,
    Board,
    ClaimRequest,
    ClockedBoard,
    InvalidArgumentError,
    InvariantError,
    LeaseExpiredError,
    MemoryBoard,
    NotFoundError,
    SqliteBoard,
    Status,
    StoreError,
    Task,
    concurrent_claim,
)
from yagent.kernel.durable.taskboard import store as store_module

REQ = ClaimRequest(30)


@pytest.fixture(params=["memory", "sqlite"])
def board(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    if request.param == "memory":
        yield MemoryBoard()
        return
    with SqliteBoard(tmp_path / "b.db") as sqlite_board:
        yield sqlite_board


def test_both_boards_satisfy_the_protocols(board: Any) -> None:
    assert isinstance(board, Board)
    assert isinstance(board, ClockedBoard)


@pytest.mark.parametrize("ttl", [0, -1, float("nan"), float("inf"), True, "5"])
def test_a_claim_request_needs_a_finite_positive_ttl(ttl: Any) -> None:
    with pytest.raises(InvalidArgumentError):
        ClaimRequest(ttl)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"id": ""},
        {"id": "a", "status": "open"},
        {"id": "a", "depends_on": "b"},
        {"id": "a", "depends_on": ("b", "b")},
        {"id": "a", "depends_on": ("",)},
        {"id": "a", "payload": None},
        {"id": "a", "lease": "tok"},
        {"id": "a", "attempts": -1},
        {"id": "a", "attempts": True},
    ],
)
def test_malformed_tasks_are_refused(kwargs: dict[str, Any]) -> None:
    with pytest.raises(InvalidArgumentError):
        Task(**kwargs)


@pytest.mark.anyio
async def test_invalid_arguments_are_refused_before_anything_is_written(board: Any) -> None:
    await board.post("a")
    calls = [
        board.post(""),
        board.post("b", "a"),
        board.post("b", (), 7),
        board.claim("a", "", REQ),
        board.claim("a", "A", 30),
        board.renew("", REQ),
        board.release(""),
        board.complete("tok", None),
        board.fail("tok", 3),
        board.cancel(""),
        board.get(""),
        board.seed(["not a task"]),
    ]
    for call in calls:
        with pytest.raises(InvalidArgumentError):
            await call
    with pytest.raises(InvalidArgumentError):
        board.set_clock(object())
    assert [t.id for t in (await board.snapshot()).tasks] == ["a"]


@pytest.mark.anyio
async def test_unknown_tasks_are_not_found(board: Any) -> None:
    assert await board.get("nope") is None
    with pytest.raises(NotFoundError):
        await board.claim("nope", "A", REQ)
    with pytest.raises(NotFoundError):
        await board.cancel("nope")


@pytest.mark.anyio
async def test_an_expired_holder_cannot_release_or_renew(board: Any) -> None:
    clock = _Clock()
    board.set_clock(clock)
    await board.post("a")
    task = await board.claim("a", "A", REQ)
    clock.t += 31
    with pytest.raises(LeaseExpiredError):
        await board.release(task.lease.token)
    with pytest.raises(LeaseExpiredError):
        await board.renew(task.lease.token, REQ)
    cancelled = await board.cancel("a")  # an expired claim holds nothing, so cancel may end it
    assert (cancelled.status, cancelled.owner, cancelled.lease) == (Status.CANCELLED, "", None)


@pytest.mark.anyio
async def test_the_race_helper_judges_outcomes_and_needs_contenders(board: Any) -> None:
    await board.post("a")
    race = await concurrent_claim([board, board], "a", ["A", "B", "C"], REQ)
    assert race.exactly_one
    assert {o for o, _ in race.refused} | {race.winners[0].owner} == {"A", "B", "C"}
    assert all(isinstance(e, AlreadyClaimedError) for _, e in race.refused)
    with pytest.raises(InvalidArgumentError):
        await concurrent_claim(board, "a", ["solo"], REQ)
    with pytest.raises(InvalidArgumentError):
        await concurrent_claim([], "a", ["A", "B"], REQ)


@pytest.mark.anyio
async def test_a_store_failure_in_a_race_is_not_a_refusal() -> None:
    class Broken(MemoryBoard):
        async def claim(self, task_id: str, owner: str, request: ClaimRequest) -> Task:
            raise StoreError("disk gone")

    with pytest.raises(ExceptionGroup) as err:
        await concurrent_claim(Broken(), "a", ["A", "B"], REQ)
    assert err.group_contains(StoreError)


@pytest.mark.anyio
async def test_a_refused_seed_leaves_the_board_and_a_sound_one_replaces_it(board: Any) -> None:
    await board.post("old")
    with pytest.raises(InvariantError, match="missing_dependency"):
        await board.seed([Task("x", depends_on=("ghost",))])
    assert [t.id for t in (await board.snapshot()).tasks] == ["old"]
    await board.seed([Task("n1"), Task("n2", depends_on=("n1",))])
    assert [t.id for t in (await board.snapshot()).tasks] == ["n1", "n2"]
    await board.post("n3")
    assert [t.id for t in (await board.snapshot()).tasks] == ["n1", "n2", "n3"]


@pytest.mark.anyio
async def test_a_snapshot_is_stamped_with_the_board_clock(board: Any) -> None:
    clock = _Clock()
    board.set_clock(clock)
    assert (await board.snapshot()).taken_at == clock.t
    assert (await board.snapshot()).task("x") is None


class _Clock:
    def __init__(self) -> None:
        self.t = 500.0

    def now(self) -> float:
        return self.t


@pytest.mark.anyio
async def test_tasks_and_claims_survive_reopening(tmp_path: Path) -> None:
    path = tmp_path / "b.db"
    with SqliteBoard(path) as board:
        await board.post("a", payload="ünï")
        await board.post("b", ["a"])
        claimed = await board.claim("a", "A", REQ)
    with SqliteBoard(path) as again:
        assert await again.get("a") == claimed
        assert claimed.lease is not None
        done = await again.complete(claimed.lease.token, "ok")
        assert done.status is Status.DONE
        assert (await again.claim("b", "B", REQ)).owner == "B"


@pytest.mark.anyio
@pytest.mark.parametrize(
    "update",
    [
        "UPDATE taskboard_tasks SET status = 'paused'",
        "UPDATE taskboard_tasks SET depends_on = 'nope'",
        "UPDATE taskboard_tasks SET depends_on = '{}'",
        "UPDATE taskboard_tasks SET expires_at = NULL",
    ],
)
async def test_an_unreadable_row_is_a_store_error(tmp_path: Path, update: str) -> None:
    path = tmp_path / "b.db"
    with SqliteBoard(path) as board:
        await board.post("a")
        await board.claim("a", "A", REQ)
        raw = sqlite3.connect(path)
        raw.execute(update)
        raw.commit()
        raw.close()
        with pytest.raises(StoreError, match="unreadable row"):
            await board.get("a")


@pytest.mark.anyio
async def test_a_token_collision_fails_instead_of_replacing_a_task(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store_module, "mint_token", lambda: "same")
    with SqliteBoard(tmp_path / "b.db") as board:
        await board.post("a")
        await board.post("b")
        await board.claim("a", "A", REQ)
        with pytest.raises(StoreError, match="transaction failed"):
            await board.claim("b", "B", REQ)
        got = await board.get("b")
        assert got is not None
        assert got.status is Status.OPEN


RACER = textwrap.dedent(
    """
    import sys, time, anyio
    from yagent.kernel.durable.taskboard import ClaimError, ClaimRequest, SqliteBoard

    async def main(path, me, start):
        while time.time() < start:
            await anyio.sleep(0.001)
        won = []
        with SqliteBoard(path) as board:
            for i in range(20):
                try:
                    await board.claim(f"t{i}", me, ClaimRequest(60))
                except ClaimError:
                    continue
                won.append(i)
        print(" ".join(map(str, won)))

    anyio.run(main, sys.argv[1], sys.argv[2], float(sys.argv[3]))
    """
)


@pytest.mark.slow
def test_processes_racing_on_one_file_claim_each_task_once(tmp_path: Path) -> None:
    path = tmp_path / "race.db"

    async def setup() -> None:
        with SqliteBoard(path) as board:
            for i in range(20):
                await board.post(f"t{i}")

    anyio.run(setup)
    start = str(time.time() + 1.0)
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", RACER, str(path), f"p{i}", start],
            stdout=subprocess.PIPE,
            text=True,
        )
        for i in range(4)
    ]
    wins: list[int] = []
    for proc in procs:
        out, _ = proc.communicate(timeout=60)
        assert proc.returncode == 0
        wins.extend(int(s) for s in out.split())
    assert sorted(wins) == list(range(20))  # every task claimed, none twice

    async def verify() -> None:
        with SqliteBoard(path) as board:
            snap = await board.snapshot()
            assert all(t.status is Status.CLAIMED and t.attempts == 1 for t in snap.tasks)

    anyio.run(verify)
