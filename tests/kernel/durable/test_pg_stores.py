"""Every PostgreSQL store passes the same contract suite as its SQLite twin, on a real server
(`tests.pg`): sidetest (22), boardtest (8), the checkpoint suite and the commitgate suite — each
case on a fresh database of its own."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from tests.pg import database
from yagent.kernel.durable import sideeffect
from yagent.kernel.durable.checkpoint.postgres import PgStore as PgCheckpoints
from yagent.kernel.durable.commitgate.postgres import PgGate
from yagent.kernel.durable.sideeffect.postgres import PgStore as PgEffects
from yagent.kernel.durable.taskboard import ClaimError, ClaimRequest
from yagent.kernel.durable.taskboard.postgres import PgBoard
from yagent.kernel.testing import boardtest, sidetest
from yagent.kernel.testing import checkpointsuite as checkpoint_suite
from yagent.kernel.testing import commitgatesuite as commitgate_suite


def _effects(_: Path) -> PgEffects:
    return PgEffects(database())


def _board(_: Path) -> PgBoard:
    return PgBoard(database())


def _checkpoints(_: Path) -> PgCheckpoints:
    return PgCheckpoints(database())


def _gate(_: Path, terminal: frozenset[str]) -> PgGate:
    return PgGate(database(), terminal)


TestPgSideEffects = pytest.mark.usefixtures("pg_cluster")(
    sidetest.suite(_effects, name="PgSideEffectContract")
)
TestPgBoard = pytest.mark.usefixtures("pg_cluster")(boardtest.suite(_board, name="PgBoard"))
TestPgCheckpoints = pytest.mark.usefixtures("pg_cluster")(
    checkpoint_suite.suite(_checkpoints, name="PgCheckpointContract")
)
TestPgGate = pytest.mark.usefixtures("pg_cluster")(
    commitgate_suite.suite(_gate, name="PgCommitGateContract")
)


def test_every_suite_runs_all_its_cases_on_postgres() -> None:
    def count(cls: type) -> int:
        return len([n for n in dir(cls) if n.startswith("test_")])

    assert count(TestPgSideEffects) == 22
    assert count(TestPgBoard) == 8
    assert count(TestPgCheckpoints) == len(checkpoint_suite.CASES)
    assert count(TestPgGate) == len(commitgate_suite.CASES)


@pytest.mark.anyio
async def test_concurrent_grants_from_two_pools_never_both_win(pg_url: str) -> None:
    """Two stores with their own pools (two machines) race 16 acquisitions of one resource under
    distinct keys, 8 at a time each: exactly one is granted; repeated on fresh resources."""
    with PgEffects(pg_url) as one, PgEffects(pg_url) as two:
        for round_ in range(5):
            outcomes: list[object] = []

            async def take(
                store: PgEffects, n: int, r: int = round_, out: list[object] = outcomes
            ) -> None:
                action = sideeffect.Action(f"k{r}-{n}", f"repo{r}")
                out.append((await store.acquire(action, f"w{n}", 60)).outcome)

            async with anyio.create_task_group() as tg:
                for n in range(16):
                    tg.start_soon(take, one if n % 2 else two, n)
            assert outcomes.count(sideeffect.Outcome.GRANTED) == 1, outcomes


@pytest.mark.anyio
async def test_concurrent_claims_from_two_pools_have_one_winner(pg_url: str) -> None:
    with PgBoard(pg_url) as one, PgBoard(pg_url) as two:
        for round_ in range(5):
            await one.post(f"t{round_}")
            won: list[str] = []

            async def claim(board: PgBoard, n: int, r: int = round_, out: list[str] = won) -> None:
                try:
                    await board.claim(f"t{r}", f"w{n}", ClaimRequest(60))
                except ClaimError:
                    return
                out.append(f"w{n}")

            async with anyio.create_task_group() as tg:
                for n in range(16):
                    tg.start_soon(claim, one if n % 2 else two, n)
            assert len(won) == 1, won


def test_stores_opening_at_once_migrate_once(pg_url: str) -> None:
    """Eight workers start on an empty database at the same moment: the schema is created once
    (the migration lock), every one opens, and the version is recorded."""
    import threading

    import psycopg

    barrier, errors, opened = threading.Barrier(8), [], []

    def start() -> None:
        barrier.wait()
        try:
            opened.append(PgEffects(pg_url))
        except Exception as exc:
            errors.append(exc)

    threads = [threading.Thread(target=start) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    for store in opened:
        store.close()
    assert errors == []
    assert len(opened) == 8
    with psycopg.connect(pg_url) as conn:
        assert list(conn.execute("SELECT component, version FROM schema_version")) == [
            ("sideeffect", 1)
        ]
