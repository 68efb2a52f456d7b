"""EffectRunner: side-effecting calls at most once per call id, through a real sideeffect store."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio
import pytest

from yagent.kernel.durable import sideeffect
from yagent.kernel.judge import toolfail
from yagent.kernel.judge.invoke import Call
from yagent.tools.effectrun import (
    EffectRunner,
    decode,
    holder_gone,
    idempotency_key,
)
from yagent.tools.effects import EffectTable, Found, shell_outcome_unknown

TABLE = EffectTable.build()
PUSH = Found("git-push", "git push", shell_outcome_unknown)


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def now(self) -> float:
        return self.t


class Tool:
    """A fake executor counting its runs."""

    def __init__(self, result: Any = None, error: BaseException | None = None) -> None:
        self.runs = 0
        self.result = {"receipt": "success", "exit_code": 0} if result is None else result
        self.error = error

    async def __call__(self) -> Any:
        self.runs += 1
        if self.error is not None:
            raise self.error
        return self.result


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def events() -> list[tuple[str, dict[str, Any]]]:
    return []


@pytest.fixture
def runner(clock: Clock, events: list[tuple[str, dict[str, Any]]]) -> EffectRunner:
    def publish(kind: str, payload: Mapping[str, Any]) -> None:
        events.append((kind, dict(payload)))

    return EffectRunner(sideeffect.MemoryStore(clock), TABLE, "s1", "", publish, ttl=30.0)


def call(call_id: str = "c1") -> Call:
    return Call("run_bash", {"command": "git push"}, call_id=call_id)


def outcomes(events: list[tuple[str, dict[str, Any]]]) -> list[str]:
    return [p["outcome"] for k, p in events if k == "side_effect"]


@pytest.mark.anyio
async def test_a_replayed_call_returns_the_recorded_result_and_does_not_run(
    runner: EffectRunner, events: list[tuple[str, dict[str, Any]]]
) -> None:
    tool = Tool()
    first = await runner.run(PUSH, call(), tool)
    again = await runner.run(PUSH, call(), tool)
    assert tool.runs == 1
    assert first.ok
    assert again.ok
    assert "not run again" in again.content
    assert json.loads(first.content) in [json.loads(again.content.split("\n", 1)[1])]
    other = await runner.run(PUSH, call("c2"), tool)  # a new call id is a new action
    assert other.ok
    assert tool.runs == 2
    assert outcomes(events) == ["applied", "already_done", "applied"]
    assert events[0][1]["key"] == "s1/-/c1"


@pytest.mark.anyio
async def test_an_ambiguous_result_is_uncertain_and_never_rerun(
    runner: EffectRunner, events: list[tuple[str, dict[str, Any]]]
) -> None:
    tool = Tool({"receipt": "timeout", "exit_code": None, "text": "pushing…"})
    first = await runner.run(PUSH, call(), tool)
    body = json.loads(first.content)
    assert not first.ok
    assert first.kind is toolfail.Kind.UNKNOWN
    assert body["outcome"] == "uncertain"
    assert "OUTCOME UNKNOWN" in body["error"]
    assert "pushing" in body["output"]  # what the command printed is not lost
    second = await runner.run(PUSH, call(), tool)
    assert tool.runs == 1
    assert json.loads(second.content)["outcome"] == "uncertain"
    assert outcomes(events) == ["uncertain", "uncertain"]
    assert "yagent reconcile s1" in events[0][1]["reconcile"]
    record = await runner.store.lookup("s1/-/c1")
    assert record is not None
    assert record.state is sideeffect.State.UNCERTAIN


@pytest.mark.anyio
async def test_a_failure_that_proves_nothing_ran_leaves_the_call_runnable(
    runner: EffectRunner,
) -> None:
    refused = Tool(error=toolfail.ToolFailure(toolfail.Kind.PERMISSION, "denied"))
    result = await runner.run(PUSH, call(), refused)
    assert not result.ok
    assert result.kind is toolfail.Kind.PERMISSION
    assert "ToolFailure: denied" in json.loads(result.content)["error"]
    fine = Tool()
    assert (await runner.run(PUSH, call(), fine)).ok  # withdrawn: the same call may run
    assert fine.runs == 1


@pytest.mark.anyio
async def test_an_unclassified_failure_may_have_applied(runner: EffectRunner) -> None:
    broken = Tool(error=RuntimeError("connection dropped mid-push"))
    result = await runner.run(PUSH, call(), broken)
    assert json.loads(result.content)["outcome"] == "uncertain"
    again = Tool()
    await runner.run(PUSH, call(), again)
    assert again.runs == 0


@pytest.mark.anyio
async def test_cancelled_mid_effect_is_uncertain_and_the_cancellation_propagates(
    runner: EffectRunner, events: list[tuple[str, dict[str, Any]]]
) -> None:
    started = anyio.Event()

    async def hang() -> Any:
        started.set()
        await anyio.sleep_forever()

    async with anyio.create_task_group() as tg:
        tg.start_soon(runner.run, PUSH, call(), hang)
        await started.wait()
        tg.cancel_scope.cancel()
    assert outcomes(events) == ["uncertain"]
    record = await runner.store.lookup("s1/-/c1")
    assert record is not None
    assert record.state is sideeffect.State.UNCERTAIN


@pytest.mark.anyio
async def test_a_call_in_flight_elsewhere_is_refused_not_run_twice(
    runner: EffectRunner, clock: Clock
) -> None:
    live = f"{socket.gethostname()}:{os.getpid()}:other"  # this very process: alive
    action = sideeffect.Action("s1/-/c1", "s1/-/c1")
    await runner.store.acquire(action, live, 30.0)
    tool = Tool()
    result = await runner.run(PUSH, call(), tool)
    assert tool.runs == 0
    assert result.kind is toolfail.Kind.CONFLICT
    assert "already running elsewhere" in json.loads(result.content)["error"]


@pytest.mark.anyio
async def test_a_call_whose_process_died_is_reported_uncertain(runner: EffectRunner) -> None:
    dead = f"{socket.gethostname()}:{dead_pid()}:x"
    await runner.store.acquire(sideeffect.Action("s1/-/c1", "s1/-/c1"), dead, 30.0)
    tool = Tool()
    result = await runner.run(PUSH, call(), tool)
    assert tool.runs == 0
    body = json.loads(result.content)
    assert body["outcome"] == "uncertain"
    assert "is gone" in body["error"]


def dead_pid() -> int:
    """The pid of a process that ran and was reaped: it names no process now."""
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


def test_holder_gone_judges_only_this_hosts_dead_processes() -> None:
    host, pid = socket.gethostname(), dead_pid()
    assert holder_gone(f"{host}:{pid}:x")
    assert not holder_gone(f"{host}:{os.getpid()}:x")
    assert not holder_gone(f"another-host:{pid}:x")
    assert not holder_gone("garbage")
    assert not holder_gone(f"{host}:1:x")  # alive (init), or not ours to signal
    zombie = subprocess.Popen(["true"])
    stat = Path(f"/proc/{zombie.pid}/stat")
    deadline = time.monotonic() + 30
    while stat.read_text().rsplit(")", 1)[1].split()[0] != "Z":  # exited, not yet reaped
        assert time.monotonic() < deadline
        time.sleep(0.01)
    assert holder_gone(f"{host}:{zombie.pid}:x")
    zombie.wait()


@pytest.mark.anyio
async def test_a_run_asked_to_stop_starts_no_side_effect(runner: EffectRunner) -> None:
    runner.stopping = lambda: True
    tool = Tool()
    result = await runner.run(PUSH, call(), tool)
    assert tool.runs == 0
    assert result.kind is toolfail.Kind.CANCELLED


@pytest.mark.anyio
async def test_a_failing_store_runs_nothing(tmp_path: Path) -> None:
    store = sideeffect.SqliteStore(tmp_path / "d.db")
    store.close()
    told: list[BaseException] = []
    runner = EffectRunner(store, TABLE, "s1", on_store_error=told.append)
    tool = Tool()
    result = await runner.run(PUSH, call(), tool)
    assert tool.runs == 0
    assert result.kind is toolfail.Kind.INTERNAL
    assert "nothing ran" in json.loads(result.content)["error"]
    assert [type(e) for e in told] == [sideeffect.StoreError], "the host is told (a full disk?)"


@pytest.mark.anyio
async def test_an_effect_that_outlives_its_lease_is_applied_but_unrecorded(
    runner: EffectRunner, clock: Clock, events: list[tuple[str, dict[str, Any]]]
) -> None:
    async def slow() -> Any:
        clock.t += 60  # past the 30 s lease, before any renewal could run
        return {"receipt": "success", "exit_code": 0}

    result = await runner.run(PUSH, call(), slow)
    assert result.ok
    assert "not recorded" in result.content
    assert outcomes(events) == ["unrecorded"]
    assert events[0][1]["reconcile"]
    again = Tool()
    await runner.run(PUSH, call(), again)
    assert again.runs == 0


@pytest.mark.anyio
async def test_a_long_effect_keeps_its_lease(clock: Clock) -> None:
    store = sideeffect.MemoryStore(clock)
    runner = EffectRunner(store, TABLE, "s1", ttl=0.05)
    renewed = anyio.Event()

    async def watch() -> Any:
        first = await store.lookup("s1/-/c1")
        assert first is not None
        with anyio.fail_after(10):
            while True:
                clock.t += 0.001
                now = await store.lookup("s1/-/c1")
                if now is not None and now.expires_at > first.expires_at + 0.001:
                    renewed.set()
                    return {"receipt": "success", "exit_code": 0}
                await anyio.sleep(0.01)

    result = await runner.run(PUSH, call(), watch)
    assert renewed.is_set()
    assert result.ok


class LosingStore(sideeffect.MemoryStore):
    async def renew(self, lease: sideeffect.Lease, ttl: float) -> sideeffect.Lease:
        raise sideeffect.StaleLeaseError("the gate changed hands")


@pytest.mark.anyio
async def test_a_lease_lost_before_the_effect_starts_runs_nothing(clock: Clock) -> None:
    runner = EffectRunner(LosingStore(clock), TABLE, "s1")
    tool = Tool()
    result = await runner.run(PUSH, call(), tool)
    assert tool.runs == 0
    assert result.kind is toolfail.Kind.CONFLICT
    assert "not started" in json.loads(result.content)["error"]


def test_keys_quote_their_parts_so_they_cannot_collide() -> None:
    assert idempotency_key("s", "", "c") == "s/-/c"
    assert idempotency_key("s", "d/1", "c") != idempotency_key("s", "d", "1/c")
    assert idempotency_key("s", "d/1", "c") == "s/d%2F1/c"


def test_a_result_resolved_without_bytes_still_reads_as_applied() -> None:
    result = decode(call(), None)
    assert result.ok
    assert "no result kept" in result.content
    kept = decode(call(), json.dumps({"ok": False, "content": "x", "kind": "timeout"}).encode())
    assert not kept.ok
    assert kept.kind is toolfail.Kind.TIMEOUT
