"""Fencing across machines on PostgreSQL: a worker paused past its lease cannot commit.

Two workers, each with its own connection pool (as on two machines): worker A is a real process
that takes a lease and is then frozen with SIGSTOP; while it is frozen its lease lapses by the
SERVER's clock; worker B takes over (or nobody does); A is resumed with SIGCONT and tries to
commit — refused, and B's work stands. Expiry is waited for by asking the server, never by
sleeping a guessed time.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from yagent.kernel.durable import sideeffect
from yagent.kernel.durable.clock import SystemClock
from yagent.kernel.durable.commitgate import Outcome
from yagent.kernel.durable.commitgate.postgres import PgGate
from yagent.kernel.durable.sideeffect.postgres import PgStore

ROOT = Path(__file__).resolve().parents[3]
WORKER = Path(__file__).resolve().parent / "pg_worker.py"
TTL = 1.0


def start_worker(url: str, kind: str) -> tuple[subprocess.Popen[str], dict[str, object]]:
    env = {**os.environ, "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT}"}
    proc = subprocess.Popen(
        [sys.executable, str(WORKER), url, kind, str(TTL)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proc.stdout is not None
    first = proc.stdout.readline()
    assert first, proc.communicate()
    return proc, json.loads(first)


def finish(proc: subprocess.Popen[str]) -> dict[str, object]:
    out, err = proc.communicate("go\n", timeout=60)
    assert proc.returncode == 0, err
    return dict(json.loads(out.strip().splitlines()[-1]))


def wait_lapsed(url: str, table: str) -> None:
    """Until the server's clock is past every lease in `table` (bounded)."""
    deadline = time.monotonic() + 30
    with psycopg.connect(url) as conn:
        while True:
            row = conn.execute(
                f"SELECT bool_and(expires_at < extract(epoch FROM clock_timestamp())) FROM {table}"  # type: ignore[arg-type]
            ).fetchone()
            if row is not None and row[0]:
                return
            assert time.monotonic() < deadline, "the lease never lapsed"
            time.sleep(0.05)


@pytest.fixture
def paused() -> Iterator[list[subprocess.Popen[str]]]:
    procs: list[subprocess.Popen[str]] = []
    yield procs
    for proc in procs:
        if proc.poll() is None:
            proc.send_signal(signal.SIGCONT)
            proc.kill()
            proc.wait(timeout=30)


@pytest.mark.anyio
async def test_a_paused_worker_cannot_complete_after_another_took_over(
    pg_url: str, paused: list[subprocess.Popen[str]]
) -> None:
    proc, said = start_worker(pg_url, "sideeffect")
    paused.append(proc)
    proc.send_signal(signal.SIGSTOP)
    wait_lapsed(pg_url, "sideeffect_gates")
    with PgStore(pg_url) as other:  # worker B: its own pool, as on another machine
        action = sideeffect.Action("push-1", "repo", sideeffect.RetrySafety.SAFE)
        grant = await other.acquire(action, "worker-b", 60)
        assert grant.outcome is sideeffect.Outcome.GRANTED
        assert grant.lease is not None
        assert grant.lease.fence == int(str(said["fence"])) + 1  # minted above A's
        proc.send_signal(signal.SIGCONT)
        assert finish(proc) == {"committed": False, "error": "StaleLeaseError"}
        await other.complete(grant.lease, b"done by b")
        record = await other.lookup("push-1")
    assert record is not None
    assert record.result == b"done by b"


@pytest.mark.anyio
async def test_a_paused_worker_cannot_complete_past_its_lease_even_alone(
    pg_url: str, paused: list[subprocess.Popen[str]]
) -> None:
    proc, _ = start_worker(pg_url, "sideeffect")
    paused.append(proc)
    proc.send_signal(signal.SIGSTOP)
    wait_lapsed(pg_url, "sideeffect_gates")
    proc.send_signal(signal.SIGCONT)
    assert finish(proc) == {"committed": False, "error": "LeaseExpiredError"}
    with PgStore(pg_url) as store:
        record = await store.lookup("push-1")
    assert record is not None
    assert record.state is not sideeffect.State.COMPLETED


@pytest.mark.anyio
async def test_a_paused_worker_cannot_commit_a_run_another_took_over(
    pg_url: str, paused: list[subprocess.Popen[str]]
) -> None:
    proc, said = start_worker(pg_url, "commitgate")
    paused.append(proc)
    proc.send_signal(signal.SIGSTOP)
    wait_lapsed(pg_url, "commitgate_gates")
    with PgGate(pg_url, {"finished"}) as other:
        got = await other.acquire("run-1", "end", "worker-b", 60)
        assert got.outcome is Outcome.GRANTED
        assert got.holding is not None
        assert got.holding.token != said["token"]
        proc.send_signal(signal.SIGCONT)
        assert finish(proc)["committed"] is False
        await other.commit(got.holding.token, "finished")
        commit = await other.committed("run-1", "end")
    assert commit is not None
    assert commit.holder == "worker-b"


@pytest.mark.anyio
@pytest.mark.parametrize("skew", [-3600.0, 3600.0])
async def test_expiry_is_the_servers_not_the_workers_clock(
    pg_url: str, monkeypatch: pytest.MonkeyPatch, skew: float
) -> None:
    """A worker whose own clock is an hour off judges nothing by it: a lease live by the server's
    clock completes even when the worker's clock says it expired (and a lapsed one is refused
    even when the worker's clock says it is live)."""
    with PgStore(pg_url) as store:
        live = await store.acquire(sideeffect.Action("k-live", "r-live"), "w", 60)
        short = await store.acquire(sideeffect.Action("k-short", "r-short"), "w", 0.2)
        assert live.lease is not None
        assert short.lease is not None
        wait_lapsed_one(pg_url, "r-short")
        real = SystemClock.now
        monkeypatch.setattr(SystemClock, "now", lambda self: real(self) + skew)
        await store.complete(live.lease, b"ok")
        with pytest.raises(sideeffect.LeaseExpiredError):
            await store.complete(short.lease, b"late")


def wait_lapsed_one(url: str, resource: str) -> None:
    deadline = time.monotonic() + 30
    with psycopg.connect(url) as conn:
        while True:
            row = conn.execute(
                "SELECT expires_at < extract(epoch FROM clock_timestamp())"
                " FROM sideeffect_gates WHERE resource = %s",
                (resource,),
            ).fetchone()
            if row is not None and row[0]:
                return
            assert time.monotonic() < deadline, "the lease never lapsed"
            time.sleep(0.05)
