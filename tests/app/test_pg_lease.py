"""The session lease on PostgreSQL: one live process per session across machines.

Two holders on different hosts, each with its own pool (two machines): the second is refused
while the first's lease is live, takes over once it lapsed by the SERVER's clock, and the first
then learns at its renewal that the lease is no longer its own.
"""

from __future__ import annotations

import time

import psycopg
import pytest

from yagent.app.lease import Holder, LeaseError, SessionBusyError, SessionLeases
from yagent.app.pgstate import LEASES
from yagent.kernel.durable import pgdb


def leases(url: str) -> tuple[pgdb.Pool, SessionLeases]:
    pool = pgdb.Pool(url)
    db = pgdb.Database(pool, prefix="lease", migrations=LEASES, error=LeaseError)
    return pool, SessionLeases(pool.where, db=db)


def wait_lapsed(url: str) -> None:
    deadline = time.monotonic() + 30
    with psycopg.connect(url) as conn:
        while True:
            row = conn.execute(
                "SELECT bool_and(expires_at < extract(epoch FROM clock_timestamp()))"
                " FROM lease_sessions"
            ).fetchone()
            if row is not None and row[0]:
                return
            assert time.monotonic() < deadline, "the lease never lapsed"
            time.sleep(0.05)


@pytest.mark.anyio
async def test_a_session_runs_in_one_process_across_machines(pg_url: str) -> None:
    pool_a, on_a = leases(pg_url)
    pool_b, on_b = leases(pg_url)
    a = Holder("token-a", 4242, "", "machine-a")
    b = Holder("token-b", 4242, "", "machine-b")  # same pid, another host: not "gone"
    try:
        await on_a.acquire("s1", a, ttl=1.0)
        with pytest.raises(SessionBusyError, match="machine-a"):
            await on_b.acquire("s1", b, ttl=60)
        wait_lapsed(pg_url)  # machine-a froze past its lease
        await on_b.acquire("s1", b, ttl=60)
        assert on_a.renew("s1", a) is False  # machine-a wakes: the lease is not its own
        assert on_b.renew("s1", b) is True
        await on_a.release("s1", a)  # a late release frees nothing of b's
        with pytest.raises(SessionBusyError, match="machine-b"):
            await on_a.acquire("s1", a, ttl=60)
    finally:
        for part in (on_a, on_b, pool_a, pool_b):
            part.close()
