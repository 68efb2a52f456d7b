"""The Director's delegations and a fan-out's tasks on Temporal: a real `yagent run --agent
director --engine temporal` (and `yagent fanout --engine temporal`) process, two real worker
processes with homes of their own, the state on the test PostgreSQL (tests.pg), a real dev
server, the scripted model (`tests.scale.modelserver`, a slow one: each answer takes a second).

- Two delegations at once over two workers taking one activity each: each worker ran one (the
  delegation workflows' histories name the worker), each in its own session registered under
  `delegation:<director session>/<delegation id>`; the receipts come back to the Director through
  `format_for_director` (its tool results) and as `delegation_receipt` events.
- Refused before anything runs (one line, exit 2): `--engine temporal` without a `postgresql://`
  store, and an address nothing answers at.
"""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import psycopg
import pytest
from temporalio.client import Client

from tests.scale.conftest import DevServer, World, free_port


def _engine(server: DevServer, world: World, *rest: str) -> list[str]:
    return ["--engine", "temporal", "--address", server.address, "--task-queue", world.queue, *rest]


async def _lane_workers(address: str) -> dict[str, str]:
    """Each delegation workflow's id → the worker (pid) that ran its activity last."""
    client = await Client.connect(address)
    found: dict[str, str] = {}
    async for wf in client.list_workflows("WorkflowType = 'yagent.delegation'"):
        history = await client.get_workflow_handle(wf.id).fetch_history()
        for event in history.events:
            if event.HasField("activity_task_started_event_attributes"):
                found[wf.id] = event.activity_task_started_event_attributes.identity.split("@")[0]
    return found


def _rows(url: str, sql: str, *args: object) -> list[tuple[object, ...]]:
    with psycopg.connect(url) as conn:
        return list(conn.execute(sql, args).fetchall())  # type: ignore[arg-type]


@pytest.mark.timeout(300)
@pytest.mark.parametrize("world", [1.0], indirect=True)
def test_the_director_s_delegations_spread_over_two_workers(
    temporal_server: DevServer, world: World, pg_url: str
) -> None:
    director_home = world.machine("director", pg_url)
    workers = [
        world.worker(temporal_server.address, parallel=1, home=world.machine(f"w{i}", pg_url))
        for i in range(2)
    ]
    task = "split the work\n@delegate coding:read the README || coding:read it again"
    env = world.env(director_home)
    import subprocess
    import sys

    done = subprocess.run(
        [
            *(sys.executable, "-m", "yagent.cli", "run", "--agent", "director", "-y", "--json"),
            *("-C", str(world.repo), *_engine(temporal_server, world), task),
        ],
        env=env,
        cwd=world.tmp,
        capture_output=True,
        text=True,
        timeout=240,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    ran_by = anyio.run(_lane_workers, temporal_server.address)
    assert len(ran_by) == 2, ran_by
    assert set(ran_by.values()) == {str(w.pid) for w in workers}  # one delegation each
    [(director,)] = _rows(pg_url, "SELECT id FROM sessions WHERE meta LIKE %s", '%"director"%')
    keys = sorted(str(k) for (k,) in _rows(pg_url, "SELECT name FROM session_keys"))
    assert keys == sorted(f"delegation:{wid.split(':', 1)[1]}" for wid in ran_by)
    assert all(k.startswith(f"delegation:{director}/") for k in keys)
    receipts = [
        json.loads(str(p))
        for (p,) in _rows(
            pg_url,
            "SELECT payload FROM events WHERE session_id = %s AND type = 'delegation_receipt'",
            director,
        )
    ]
    assert [r["receipt"]["status"] for r in receipts] == ["completed", "completed"], receipts
    results = [
        str(c)
        for (c,) in _rows(
            pg_url,
            "SELECT body FROM messages WHERE session_id = %s AND body LIKE '%%\"tool\"%%'",
            director,
        )
    ]
    delegated = [r for r in results if '"name":"delegate"' in r]
    assert len(delegated) == 2, results
    assert all("(coding): completed" in r for r in delegated), delegated  # format_for_director


def test_engine_temporal_is_refused_without_postgres_and_with_no_server(
    temporal_server: DevServer, world: World, pg_url: str
) -> None:
    import subprocess
    import sys

    def run(home: Path, address: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [
                *(sys.executable, "-m", "yagent.cli", "run", "--agent", "director", "-y"),
                *("-C", str(world.repo), "--engine", "temporal", "--address", address, "hi"),
            ],
            env=world.env(home),
            cwd=world.tmp,
            capture_output=True,
            text=True,
            timeout=120,
            stdin=subprocess.DEVNULL,
        )

    sqlite = run(world.home, temporal_server.address)
    assert sqlite.returncode == 2
    assert len(sqlite.stderr.strip().splitlines()) == 1, sqlite.stderr
    assert 'needs [store] url = "postgresql://' in sqlite.stderr
    assert world.model.requests == 0
    nowhere = f"127.0.0.1:{free_port()}"
    lost = run(world.machine("m", pg_url), nowhere)
    assert lost.returncode == 2
    assert lost.stderr.strip().splitlines() == [lost.stderr.strip()]  # one line
    assert f"cannot reach Temporal at {nowhere}" in lost.stderr
    assert world.model.requests == 0
