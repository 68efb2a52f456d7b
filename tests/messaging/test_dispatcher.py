"""Dispatcher: normal drops newest, critical drops oldest and is read first; drops counted."""

from __future__ import annotations

import anyio
import pytest

from yagent.messaging import (
    USER_HELP_NEEDED,
    USER_HELP_RESPONSE,
    Dispatcher,
    DispatcherClosedError,
    Event,
)


def test_normal_queue_drops_newest_when_full() -> None:
    d = Dispatcher(maxsize=2, critical_maxsize=2)
    assert d.send(Event("a"))
    assert d.send(Event("b"))
    assert not d.send(Event("c"))
    assert d.stats.dropped_newest == 1
    assert [d.receive_nowait().type for _ in range(2)] == ["a", "b"]  # type: ignore[union-attr]
    assert d.receive_nowait() is None


def test_critical_queue_is_fifo_drops_oldest_and_is_read_first() -> None:
    d = Dispatcher(maxsize=4, critical_maxsize=2)
    d.send(Event("progress"))
    d.send(Event(USER_HELP_NEEDED, {"n": 1}))
    d.send(Event(USER_HELP_RESPONSE, {"n": 2}))
    assert not d.send(Event(USER_HELP_NEEDED, {"n": 3}))  # kept, but the oldest went
    assert d.stats.dropped_oldest_critical == 1
    assert d.pending() == (2, 1)
    got = [d.receive_nowait() for _ in range(3)]
    assert [e.payload.get("n") for e in got if e] == [2, 3, None]


def test_sizes_validated() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        Dispatcher(maxsize=0)


@pytest.mark.anyio
async def test_receive_waits_and_close_ends() -> None:
    d = Dispatcher()
    got: list[str] = []

    async def reader() -> None:
        try:
            while True:
                got.append((await d.receive()).type)
        except DispatcherClosedError:
            got.append("closed")

    async with anyio.create_task_group() as tg:
        tg.start_soon(reader)
        tg.start_soon(reader)
        await anyio.sleep(0.01)
        d.send(Event("x"))
        await anyio.sleep(0.01)
        d.send(Event("y"))
        await anyio.sleep(0.01)
        d.close()
    assert sorted(got) == ["closed", "closed", "x", "y"]
    assert not d.send(Event("late"))


@pytest.mark.anyio
async def test_send_threadsafe_from_a_worker_thread() -> None:
    d = Dispatcher()
    await anyio.to_thread.run_sync(d.send_threadsafe, Event("from-thread"))
    assert (await d.receive()).type == "from-thread"
