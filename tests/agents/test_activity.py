"""activity: heartbeats renew idle only; pause/resume walk the parent chain; typed expiry."""

from __future__ import annotations

import anyio
import pytest

from yagent.agents.activity import IdleTimeoutError, Monitor, TotalTimeoutError
from yagent.agents.pause import PauseAbandonedError, PauseGate


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def test_heartbeat_renews_idle_not_total() -> None:
    clock = Clock()
    m = Monitor(idle=10, total=25, clock=clock)
    for _ in range(3):
        clock.t += 8
        m.heartbeat()
        assert m.expired() is None
    clock.t += 2  # 26s total
    assert isinstance(m.expired(), TotalTimeoutError)


def test_idle_expiry() -> None:
    clock = Clock()
    m = Monitor(idle=10, clock=clock)
    clock.t += 10
    cause = m.expired()
    assert isinstance(cause, IdleTimeoutError)
    assert "no activity" in str(cause)


def test_pause_freezes_and_resume_moves_the_idle_baseline() -> None:
    clock = Clock()
    m = Monitor(idle=10, total=30, clock=clock)
    clock.t += 5
    m.pause()
    clock.t += 100  # a long pause counts for neither timer
    assert m.expired() is None
    m.heartbeat()  # heartbeats while paused do nothing
    m.resume()
    assert m.idle_for() == 0
    assert m.elapsed() == pytest.approx(5)
    clock.t += 9
    assert m.expired() is None


def test_pause_and_resume_walk_the_parent_chain() -> None:
    clock = Clock()
    outer = Monitor(idle=10, clock=clock)
    inner = Monitor(idle=10, clock=clock, parent=outer)
    inner.pause()
    assert outer.paused
    clock.t += 50
    assert outer.expired() is None
    inner.resume()
    assert not outer.paused
    assert outer.expired() is None


def test_c9_a_childs_heartbeat_renews_its_parents_idle_but_not_its_total() -> None:
    clock = Clock()
    director = Monitor(idle=10, total=25, clock=clock)
    child = Monitor(idle=10, clock=clock, parent=director)
    for _ in range(3):
        clock.t += 8
        child.heartbeat()  # the delegated run is busy: its delegator is not idle
        assert director.expired() is None
    clock.t += 2
    assert isinstance(director.expired(), TotalTimeoutError)
    clock.t -= 2
    director.heartbeat()  # a parent's heartbeat is not its child's activity
    clock.t += 9
    assert child.expired() is None
    clock.t += 1
    assert isinstance(child.expired(), IdleTimeoutError)


def test_resume_when_not_paused_is_not_a_heartbeat() -> None:
    clock = Clock()
    m = Monitor(idle=10, clock=clock)
    clock.t += 9
    m.resume()
    clock.t += 1
    assert isinstance(m.expired(), IdleTimeoutError)


@pytest.mark.anyio
async def test_watch_cancels_the_scope_and_records_the_cause() -> None:
    clock = Clock()
    m = Monitor(total=5, clock=clock)
    with anyio.CancelScope() as scope:
        async with anyio.create_task_group() as tg:
            tg.start_soon(lambda: m.watch(scope, interval=0.001))
            clock.t += 6
            await anyio.sleep(1)
    assert scope.cancelled_caught
    with pytest.raises(TotalTimeoutError):
        m.raise_if_expired()


@pytest.mark.anyio
async def test_pause_gate_waits_resumes_and_abandons() -> None:
    gate = PauseGate()
    await gate.wait()  # not paused: returns at once
    gate.pause()
    m = Monitor(idle=1, clock=Clock())
    passed = False

    async def waiter() -> None:
        nonlocal passed
        await gate.wait(m)
        passed = True

    async with anyio.create_task_group() as tg:
        tg.start_soon(waiter)
        await anyio.sleep(0.01)
        assert not passed
        assert m.paused
        gate.resume()
    assert passed
    assert not m.paused
    gate.pause()
    with anyio.fail_after(1):
        async with anyio.create_task_group() as tg:

            async def abandoned() -> None:
                with pytest.raises(PauseAbandonedError):
                    await gate.wait()

            tg.start_soon(abandoned)
            await anyio.sleep(0.01)
            gate.abandon()
    with pytest.raises(PauseAbandonedError):
        await gate.wait()
