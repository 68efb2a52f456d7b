"""The short steps of a Temporal task heartbeat too: a real dev server, a real `yagent worker`,
a repository reached over a slow transport (a `GIT_SSH_COMMAND` that waits `SLOW` seconds before
git talks), and a batch whose heartbeat timeout is shorter than that wait. `prepare` (and the run,
which makes the checkout again) outlast the heartbeat timeout and still complete, once each: the
activity beats while git works in a thread. Without the beats the prepare step times out at the
heartbeat timeout and is started again (a second attempt, a second slow clone)."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest
from temporalio.client import Client

from tests.scale.conftest import DevServer, World

HEARTBEAT = 5  # seconds without a beat before Temporal counts a worker dead
SLOW = 3 * HEARTBEAT  # what the transport waits before git talks


def lines(out: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


async def scheduled(address: str, key: str) -> list[tuple[str, float, int]]:
    """The task's activities as Temporal ran them: (type, heartbeat timeout, attempt)."""
    client = await Client.connect(address)
    history = await client.get_workflow_handle(key).fetch_history()
    timeouts: dict[int, tuple[str, float]] = {}
    out = []
    for event in history.events:
        if event.HasField("activity_task_scheduled_event_attributes"):
            attrs = event.activity_task_scheduled_event_attributes
            timeouts[event.event_id] = (
                attrs.activity_type.name,
                attrs.heartbeat_timeout.ToTimedelta().total_seconds(),
            )
        if event.HasField("activity_task_started_event_attributes"):
            started = event.activity_task_started_event_attributes
            name, beat = timeouts[started.scheduled_event_id]
            out.append((name, beat, started.attempt))
    return out


def slow_transport(world: World) -> Path:
    """A `GIT_SSH_COMMAND` for `ssh://slowhost/PATH`: logs, waits `SLOW` s, then runs git's
    command on this machine."""
    log = world.tmp / "transport.log"
    script = world.bin / "slow-ssh"
    script.write_text(
        f'#!/bin/sh\necho "$@" >> {log}\nsleep {SLOW}\nfor last; do :; done\nexec sh -c "$last"\n'
    )
    script.chmod(0o755)
    return script


@pytest.mark.timeout(300)
def test_a_prepare_longer_than_the_heartbeat_timeout_completes(
    temporal_server: DevServer, world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GIT_SSH_COMMAND", str(slow_transport(world)))
    monkeypatch.setenv("GIT_SSH_VARIANT", "simple")
    world.worker(temporal_server.address, parallel=2)
    rows = [{"id": "slow", "repo": f"ssh://slowhost{world.repo}", "task": "@write f.txt one"}]
    path = world.tasks("tasks.jsonl", rows)
    args = ["--engine", "temporal", "--address", temporal_server.address]
    args += ["--task-queue", world.queue, "--heartbeat", str(HEARTBEAT)]
    done = world.yagent(["batch", str(path), "--json", *args], 240)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    final = lines(done.stdout)[-1]
    assert final["counts"]["completed"] == 1  # type: ignore[index]
    transport = (world.tmp / "transport.log").read_text().splitlines()
    assert len(transport) == 2  # prepare's clone, then the run's: each slower than a heartbeat
    ran = anyio.run(scheduled, temporal_server.address, f"{final['batch_id']}/slow")
    assert ran == [
        ("yagent.prepare", HEARTBEAT, 1),
        ("yagent.run", HEARTBEAT, 1),
        ("yagent.collect", HEARTBEAT, 1),
        ("yagent.cleanup", HEARTBEAT, 1),
    ]
