"""The engines driven in this process (where coverage sees them): the local engine's
`run_batch` / `states` / `results` / `cancel`, and a Temporal worker (`scale.temporal.worker.serve`)
with the client functions of `yagent batch` against the real dev server. (The waits poll the
server: a remote state has no event to wait on — ASYNC110 is silenced there.)"""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from tests.scale.conftest import DevServer, World
from yagent.scale import local
from yagent.scale import states as st
from yagent.scale.tasks import load
from yagent.scale.temporal import client as tc
from yagent.scale.temporal.worker import connect, serve


@pytest.fixture
def quiet_env(world: World, monkeypatch: pytest.MonkeyPatch) -> World:
    for key, value in world.env().items():
        monkeypatch.setenv(key, value)
    return world


def test_the_local_engine_runs_once_and_cancel_stops_what_has_not_run(quiet_env: World) -> None:
    world = quiet_env
    rows = [{"id": f"a{i}", "repo": "repo", "task": f"@write x{i}.txt {i}"} for i in range(2)]
    batch = load(world.tasks("a.jsonl", rows))
    seen: list[st.TaskState] = []

    async def go() -> None:
        work = world.home / "work"
        assert await local.run_batch(world.home, work, batch, max_parallel=2, on_change=seen.append)
        asked = world.model.requests
        again: list[st.TaskState] = []
        assert not await local.run_batch(
            world.home, work, batch, max_parallel=2, on_change=again.append
        )
        assert world.model.requests == asked
        assert {(s.id, s.state) for s in again} == {("a0", "completed"), ("a1", "completed")}

    anyio.run(go)
    assert [s.state for s in seen if s.id == "a0"] == ["pending", "running", "completed"]
    assert [r["status"] for r in local.results(world.home, batch.id)] == ["completed"] * 2
    assert st.counts(local.states(world.home, batch.id))["completed"] == 2

    # a batch cancelled before it ran: a submission then runs none of its tasks
    other = load(world.tasks("b.jsonl", [{"id": "c", "repo": "repo", "task": "@write c.txt c"}]))
    (world.home / "batches" / other.id).mkdir(parents=True)
    (world.home / "batches" / other.id / local.MANIFEST).write_text('{"tasks": ["c"]}')
    assert anyio.run(local.cancel, world.home, other.id) == 1
    late: list[st.TaskState] = []
    anyio.run(
        lambda: local.run_batch(
            world.home, world.home / "work", other, max_parallel=1, on_change=late.append
        )
    )
    assert [s.state for s in late] == ["cancelled"]
    with pytest.raises(local.UnknownBatch):
        local.states(world.home, "b-none")

    # write areas confine the run as `yagent fanout` does: refused on a preset that cannot
    confined = load(
        world.tasks("w.jsonl", [{"repo": "repo", "task": "@write a a", "write": ["a"]}])
    )
    anyio.run(
        lambda: local.run_batch(
            world.home, world.home / "work", confined, max_parallel=1, on_change=late.append
        )
    )
    (refused,) = local.results(world.home, confined.id)
    assert (refused["status"], refused["run_status"]) == ("failed", "refused")
    assert "sandboxed preset" in refused["error"]
    assert refused["patch"] == ""


@pytest.mark.timeout(300)
def test_a_worker_in_this_process_runs_a_batch_and_cancel_reaches_a_running_task(
    temporal_server: DevServer, quiet_env: World
) -> None:
    world = quiet_env
    rows = [
        {"id": "quick", "repo": "repo", "task": "@write q.txt q"},
        {"id": "bad", "repo": "repo", "ref": "nope", "task": "@write b.txt b"},
    ]
    batch = load(world.tasks("t.jsonl", rows))
    slow = load(world.tasks("s.jsonl", [{"id": "slow", "repo": "repo", "task": "@bash sleep 60"}]))

    async def go() -> None:
        client = await connect(temporal_server.address)
        async with anyio.create_task_group() as tg:
            tg.start_soon(
                lambda: serve(
                    client,
                    home=world.home,
                    work=world.home / "work",
                    task_queue=world.queue,
                    max_parallel=2,
                )
            )
            assert await tc.submit(client, batch, world.queue, {"heartbeat": 10})
            assert not await tc.submit(client, batch, world.queue, {"heartbeat": 10})
            with anyio.fail_after(120):
                while not st.done(found := await tc.states(client, batch.id)):  # noqa: ASYNC110
                    await anyio.sleep(0.2)
            assert [(s.id, s.state) for s in found] == [("quick", "completed"), ("bad", "failed")]
            assert "unknown ref 'nope'" in found[1].detail
            results = await tc.results(client, batch.id)
            assert "+q" in results[0]["patch"]
            assert results[1]["steps"][0]["status"] == "failed"

            assert await tc.submit(client, slow, world.queue, {"heartbeat": 10})
            with anyio.fail_after(120):
                while (await tc.states(client, slow.id))[0].state != st.RUNNING:  # noqa: ASYNC110
                    await anyio.sleep(0.2)
            assert await tc.cancel(client, slow.id) == 1
            with anyio.fail_after(120):
                while not st.done(found := await tc.states(client, slow.id)):  # noqa: ASYNC110
                    await anyio.sleep(0.2)
            assert found[0].state == st.CANCELLED
            with pytest.raises(tc.UnknownBatch):
                await tc.states(client, "b-none")
            tg.cancel_scope.cancel()

    anyio.run(go)


def test_checkout_refuses_with_gits_reason(tmp_path: Path) -> None:
    from yagent.scale import checkout

    with pytest.raises(checkout.CheckoutError, match="git clone"):
        checkout.prepare(str(tmp_path / "none"), "HEAD", tmp_path / "dest")
