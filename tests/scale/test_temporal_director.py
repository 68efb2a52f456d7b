"""The Director's delegations and a fan-out's tasks on Temporal: a real `yagent run --agent
director --engine temporal` (and `yagent fanout --engine temporal`) process, two real worker
processes with homes of their own, the state on the test PostgreSQL (tests.pg), a real dev
server, the scripted model (`tests.scale.modelserver`, a slow one: each answer takes a second).

- Two delegations at once over two workers taking one activity each: each worker ran one (the
  delegation workflows' histories name the worker), each in its own session registered under
  `delegation:<director session>/<delegation id>`; the receipts come back to the Director through
  `format_for_director` (its tool results) and as `delegation_receipt` events.
- A worker SIGKILLed mid-delegation (its first step recorded): Temporal retries the lane on the
  other worker, which finds the lane's session and continues it from its checkpoint; the
  Director gets one completed receipt.
- `yagent fanout --engine temporal`: a plan's two tasks run one on each worker, confined to
  their areas of the shared workspace (their files are there), receipts as the local engine's.
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


async def _lane_workers(address: str, queue: str) -> dict[str, str]:
    """Each delegation workflow's id (on `queue`) → the worker (pid) that ran its activity last."""
    client = await Client.connect(address)
    found: dict[str, str] = {}
    async for wf in client.list_workflows("WorkflowType = 'yagent.delegation'"):
        if wf.task_queue != queue:
            continue
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
    ran_by = anyio.run(_lane_workers, temporal_server.address, world.queue)
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


async def _running_lane(address: str, queue: str) -> tuple[str, str] | None:
    """(workflow id, worker pid) of a delegation whose activity a worker is running, if any."""
    client = await Client.connect(address)
    async for wf in client.list_workflows("WorkflowType = 'yagent.delegation'"):
        if wf.task_queue != queue:
            continue
        described = await client.get_workflow_handle(wf.id).describe()
        for pending in described.raw_description.pending_activities:
            if pending.last_worker_identity and pending.attempt == 1:
                return wf.id, pending.last_worker_identity.split("@")[0]
    return None


@pytest.mark.timeout(300)
@pytest.mark.parametrize("world", [2.0], indirect=True)
def test_a_killed_worker_s_delegation_is_retried_on_the_other(
    temporal_server: DevServer, world: World, pg_url: str
) -> None:
    import os
    import signal
    import subprocess
    import sys
    import time

    workers = [
        world.worker(temporal_server.address, parallel=1, home=world.machine(f"w{i}", pg_url))
        for i in range(2)
    ]
    child = "look around\\n@bash echo one\\n@bash echo two"
    task = f"one delegation\n@delegate coding:{child}"
    director = subprocess.Popen(
        [
            *(sys.executable, "-m", "yagent.cli", "run", "--agent", "director", "-y", "--json"),
            *("-C", str(world.repo), *_engine(temporal_server, world, "--heartbeat", "8"), task),
        ],
        env=world.env(world.machine("director", pg_url)),
        cwd=world.tmp,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    running = None
    while running is None:
        assert time.monotonic() < deadline, "no delegation started on a worker"
        assert director.poll() is None, director.communicate()
        time.sleep(0.3)
        running = anyio.run(_running_lane, temporal_server.address, world.queue)
    wid, pid = running
    while not _rows(  # mid-run: its first step is recorded (and checkpointed) in PostgreSQL
        pg_url,
        "SELECT 1 FROM events e JOIN session_keys k ON k.session_id = e.session_id"
        " WHERE e.type = 'tool_result'",
    ):
        assert time.monotonic() < deadline, "the delegation never got to its first step"
        time.sleep(0.1)
    victim = next(w for w in workers if str(w.pid) == pid)
    os.killpg(victim.pid, signal.SIGKILL)
    victim.wait(30)
    out, err = director.communicate(timeout=240)
    assert director.returncode == 0, out[-3000:] + err[-3000:]
    survivor = next(w for w in workers if w is not victim)
    assert anyio.run(_lane_workers, temporal_server.address, world.queue)[wid] == str(survivor.pid)
    keys = _rows(pg_url, "SELECT name, session_id FROM session_keys")
    assert len(keys) == 1  # the retry found the lane's session; it made none
    [(sid,)] = _rows(pg_url, "SELECT session_id FROM session_keys")
    starts = _rows(
        pg_url,
        "SELECT payload FROM events WHERE session_id = %s AND type = 'delegation_start'",
        sid,
    )
    kinds = _rows(pg_url, "SELECT type FROM events WHERE session_id = %s ORDER BY seq", sid)
    resumed = [json.loads(str(p))["resumed"] for (p,) in starts]
    assert resumed == [False, True], kinds  # the retry continued from the checkpoint
    receipts = [
        json.loads(str(p))["receipt"]["status"]
        for (p,) in _rows(pg_url, "SELECT payload FROM events WHERE type = 'delegation_receipt'")
    ]
    assert receipts == ["completed"]


@pytest.mark.timeout(300)
@pytest.mark.parametrize("world", [1.0], indirect=True)
def test_a_fanout_s_tasks_run_on_the_workers(
    temporal_server: DevServer, world: World, pg_url: str
) -> None:
    import subprocess
    import sys

    def sandboxed(name: str) -> Path:
        home = world.machine(name, pg_url)
        config = home / "config.toml"  # the default preset: commands confined (bwrap)
        config.write_text(config.read_text().replace('preset = "yolo"\n', ""))
        return home

    workers = [
        world.worker(temporal_server.address, parallel=1, home=sandboxed(f"w{i}")) for i in range(2)
    ]
    plan = world.tmp / "plan.toml"
    plan.write_text(
        '[[task]]\nname = "docs"\nagent = "coding"\ntask = "@write docs/a.txt one"\n'
        'write = ["docs"]\n\n'
        '[[task]]\nname = "src"\nagent = "coding"\ntask = "@write src/b.txt two"\n'
        'write = ["src"]\n'
    )
    done = subprocess.run(
        [
            *(sys.executable, "-m", "yagent.cli", "fanout", str(plan), "-y", "--json"),
            *("-C", str(world.repo), *_engine(temporal_server, world)),
        ],
        env=world.env(sandboxed("host")),
        cwd=world.tmp,
        capture_output=True,
        text=True,
        timeout=240,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert (world.repo / "docs" / "a.txt").read_text() == "one\n"
    assert (world.repo / "src" / "b.txt").read_text() == "two\n"
    ran_by = anyio.run(_lane_workers, temporal_server.address, world.queue)
    assert set(ran_by.values()) == {str(w.pid) for w in workers}  # one task each
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    receipts = [e for e in events if e["type"] == "receipt"]
    assert [(r["name"], r["status"]) for r in receipts] == [
        ("docs", "completed"),
        ("src", "completed"),
    ]
    starts = [e for e in events if e["type"] == "delegation_start"]
    assert {e["engine"] for e in starts} == {"temporal"}
