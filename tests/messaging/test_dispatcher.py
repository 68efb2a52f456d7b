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


# -- ready(linger): a display woken once per burst, not once per event -------------------------
HOUR = 3600.0  # a linger no test waits out: only an event (or close) may end it


async def _drain(d: Dispatcher) -> list[str]:
    got: list[str] = []
    while (event := d.receive_nowait()) is not None:
        got.append(event.type)
    return got


@pytest.mark.anyio
async def test_ready_returns_at_once_when_an_event_waits() -> None:
    d = Dispatcher()
    d.send(Event("a"))
    with anyio.fail_after(30):  # a hang guard: lingering here would be the bug
        await d.ready(linger=HOUR)
    assert await _drain(d) == ["a"]


@pytest.mark.anyio
async def test_a_burst_is_drained_in_one_wake_up_and_a_critical_event_ends_the_linger() -> None:
    """The producer yields between its events (as the loop does); the consumer, woken by the
    first, lingers and drains them all at once — in order, the critical one first."""
    d = Dispatcher()
    batches: list[list[str]] = []

    async def consumer() -> None:
        await d.ready(linger=HOUR)
        batches.append(await _drain(d))

    with anyio.fail_after(30):
        async with anyio.create_task_group() as tg:
            tg.start_soon(consumer)
            await anyio.lowlevel.checkpoint()  # the consumer waits
            for n in range(50):
                d.send(Event(f"e{n}"))
                await anyio.lowlevel.checkpoint()
            d.send(Event(USER_HELP_NEEDED))
    assert batches == [[USER_HELP_NEEDED, *(f"e{n}" for n in range(50))]]


@pytest.mark.anyio
async def test_a_linger_ends_when_the_queue_is_half_full_so_nothing_is_dropped() -> None:
    d = Dispatcher(maxsize=8)
    got: list[str] = []
    batches = 0

    async def consumer() -> None:
        nonlocal batches
        try:
            while True:
                await d.ready(linger=HOUR)
                batches += 1
                got.extend(await _drain(d))
        except DispatcherClosedError:
            return

    with anyio.fail_after(30):
        async with anyio.create_task_group() as tg:
            tg.start_soon(consumer)
            await anyio.lowlevel.checkpoint()
            for n in range(40):
                assert d.send(Event(f"e{n}")), f"e{n} dropped"
                await anyio.lowlevel.checkpoint()
            d.close()  # also ends a linger
    assert got == [f"e{n}" for n in range(40)]
    assert d.stats.dropped_newest == 0
    assert batches < 40  # several events per wake-up


@pytest.mark.anyio
async def test_ready_raises_once_closed_and_drained() -> None:
    d = Dispatcher()
    d.send(Event("last"))
    d.close()
    await d.ready(linger=HOUR)
    assert await _drain(d) == ["last"]
    with pytest.raises(DispatcherClosedError):
        await d.ready(linger=HOUR)


@pytest.mark.anyio
async def test_no_linger_once_the_queue_is_half_full() -> None:
    """A burst that half filled the queue before the consumer ran is drained without waiting."""
    d = Dispatcher(maxsize=8)
    got: list[list[str]] = []

    async def consumer() -> None:
        await d.ready(linger=HOUR)
        got.append(await _drain(d))

    with anyio.fail_after(30):
        async with anyio.create_task_group() as tg:
            tg.start_soon(consumer)
            await anyio.lowlevel.checkpoint()  # the consumer waits for the first event
            for n in range(4):  # sent without an await between them
                d.send(Event(f"e{n}"))
    assert got == [[f"e{n}" for n in range(4)]]


def test_next_in_order_gives_publish_order_across_the_two_queues() -> None:
    """A display shows events as they were published — an approval question after the tool
    call it is about — while `receive_nowait` still reads the critical queue first."""
    d = Dispatcher(critical_maxsize=2)
    for name in ("a", USER_HELP_NEEDED, "b", "c", USER_HELP_RESPONSE, "d"):
        d.send(Event(name))
    got = []
    while (event := d.next_in_order()) is not None:
        got.append(event.type)
    assert got == ["a", USER_HELP_NEEDED, "b", "c", USER_HELP_RESPONSE, "d"]


def test_next_in_order_after_a_displaced_question_and_mixed_reads() -> None:
    d = Dispatcher(critical_maxsize=1)
    d.send(Event("a"))
    d.send(Event(USER_HELP_NEEDED, {"n": 1}))
    d.send(Event("b"))
    d.send(Event(USER_HELP_NEEDED, {"n": 2}))  # the first question let go: its queue holds one
    d.send(Event("c"))
    first = d.receive_nowait()  # critical first, as before
    assert first is not None
    assert first.payload == {"n": 2}
    d.send(Event(USER_HELP_RESPONSE))
    got = []
    while (event := d.next_in_order()) is not None:
        got.append(event.type)
    assert got == ["a", "b", "c", USER_HELP_RESPONSE]
