"""A worker fleet whose state is on PostgreSQL: each worker has a yagent home of its own (another
"machine": its own configuration, its own work folder, no shared SQLite file) and `[store] url`
on the test cluster (tests.pg); a real Temporal dev server, real worker processes, the scripted
model (`tests.scale.modelserver`).

- Tasks spread over two machines all complete with their own patch — every step of a task that
  touches the checkout runs where its run ran — and their sessions are in PostgreSQL, one per
  task, found by key (`SessionStore.keyed_session`); neither home has a sessions file.
- A worker SIGKILLed while its task's side effect runs: Temporal retries the run on the other
  machine, which finds the task's session and checkpoint in PostgreSQL, resumes it, reports the
  side effect uncertain and does not repeat it; the batch completes.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path

import anyio
import psycopg
import pytest

from tests.scale.conftest import DevServer, World
from tests.scale.test_temporal_batch import _ancestor, batch_args, lines, started


def _sessions(url: str) -> list[tuple[str, str]]:
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT k.name, s.id FROM session_keys k JOIN sessions s ON s.id = k.session_id"
        ).fetchall()
        total = conn.execute("SELECT count(*) FROM sessions").fetchone()
    assert total is not None
    assert total[0] == len(rows)  # every session is a task's, keyed
    return sorted((str(name), str(sid)) for name, sid in rows)


@pytest.mark.timeout(300)
def test_tasks_over_two_machines_keep_their_patches_and_their_sessions_in_postgres(
    temporal_server: DevServer, world: World, pg_url: str
) -> None:
    homes = [world.machine(f"m{i}", pg_url) for i in range(2)]
    for home in homes:
        world.worker(temporal_server.address, parallel=2, home=home)
    rows = [{"id": f"p{i}", "repo": "repo", "task": f"@write p{i}.txt value {i}"} for i in range(6)]
    path = world.tasks("tasks.jsonl", rows)
    done = world.yagent(["batch", str(path), "--json", *batch_args(temporal_server, world)], 240)
    assert done.returncode == 0, done.stderr[-3000:]
    batch_id = str(lines(done.stdout)[-1]["batch_id"])
    got = world.yagent(
        ["batch", "results", batch_id, "--json", *batch_args(temporal_server, world)]
    )
    results = lines(got.stdout)
    assert [r["id"] for r in results] == [f"p{i}" for i in range(6)]
    for i, result in enumerate(results):
        assert result["status"] == "completed", result
        assert f"+value {i}" in str(result["patch"]), result  # the run's own checkout's patch
    keys = [f"{batch_id}/p{i}" for i in range(6)]
    workers = {pid for pid, _ in anyio.run(started, temporal_server.address, keys)}
    assert workers == {str(p.pid) for p in world.procs}  # both machines worked
    assert [name for name, _ in _sessions(pg_url)] == [f"batch:{k}" for k in keys]
    for home in homes:
        assert not (home / "sessions.db").exists()  # the state is in PostgreSQL
        assert list((home / "work").rglob(".yagent-base")) == []  # no checkout left behind


@pytest.mark.timeout(400)
def test_a_killed_machine_s_run_resumes_on_another_from_postgres(
    temporal_server: DevServer, world: World, pg_url: str
) -> None:
    counter = world.tmp / "deploys.log"
    script = world.bin / "deploy-thing"
    script.write_text(f'#!/bin/sh\necho "$$" >> {counter}\nexec sleep 300\n')
    script.chmod(0o755)
    homes = [world.machine(f"m{i}", pg_url) for i in range(2)]
    workers = [world.worker(temporal_server.address, parallel=2, home=h) for h in homes]
    rows = [{"id": "deploy", "repo": "repo", "task": "ship it\n@bash deploy-thing now"}]
    path = world.tasks("tasks.jsonl", rows)
    args = batch_args(temporal_server, world, "--heartbeat", "8")
    submitted = world.yagent(["batch", str(path), "--json", "--detach", *args])
    assert submitted.returncode == 0, submitted.stderr[-3000:]
    deadline = time.monotonic() + 180
    while not counter.exists() or not counter.read_text().strip():
        assert time.monotonic() < deadline, "the side effect never started"
        time.sleep(0.1)
    sleeper = int(counter.read_text().split()[0])
    victim = _ancestor(sleeper, {w.pid for w in workers})
    assert victim is not None
    os.killpg(victim, signal.SIGKILL)  # the machine's worker and what it started
    next(w for w in workers if w.pid == victim).wait(30)
    with contextlib.suppress(ProcessLookupError):
        os.kill(sleeper, signal.SIGKILL)

    done = world.yagent(["batch", str(path), "--json", *args], 300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    final = lines(done.stdout)[-1]
    assert final["counts"]["completed"] == 1  # type: ignore[index]
    batch_id = str(final["batch_id"])
    got = world.yagent(["batch", "results", batch_id, "--json", *args])
    (deploy,) = lines(got.stdout)
    assert deploy["status"] == "completed", deploy
    assert deploy["resumed"] is True  # continued from the checkpoint in PostgreSQL
    assert [u["call_id"] for u in deploy["uncertain"]] == ["c0"]  # type: ignore[index, union-attr]
    assert len(counter.read_text().splitlines()) == 1  # never repeated
    survivor = next(w for w in workers if w.pid != victim)
    attempts = anyio.run(started, temporal_server.address, [f"{batch_id}/deploy"])
    assert (str(survivor.pid), 2) in attempts  # the run's second attempt, on the other machine
    [(name, sid)] = _sessions(pg_url)  # the retry found the session, it made none
    assert (name, sid) == (f"batch:{batch_id}/deploy", deploy["session_id"])
    for home in homes:
        assert not (home / "sessions.db").exists()
        assert not Path(home / "durable.db").exists()
