"""eventbus: lossy, never-blocking broadcast with counted drops, from tasks and threads."""

from __future__ import annotations

import asyncio
import threading
import time
from collections import defaultdict

import anyio
import anyio.lowlevel
import anyio.to_thread
import pytest

from yagent.kernel.trace import eventbus
from yagent.kernel.trace.eventbus import Bus, Delivery


def drain(sub: eventbus.Subscription[int]) -> list[int]:
    out: list[int] = []
    while len(sub):
        out.append(sub.get(timeout=0))
    return out


# --- basic contract ----------------------------------------------------------------------------


def test_publish_without_subscribers_delivers_nothing_and_counts_the_publish() -> None:
    bus: Bus[int] = Bus()
    assert bus.publish(1) == Delivery(0, 0, 0)
    assert bus.stats().published == 1


def test_each_subscriber_gets_every_event_in_order() -> None:
    bus: Bus[int] = Bus()
    a, b = bus.subscribe(10), bus.subscribe(10)
    for i in range(5):
        assert bus.publish(i) == Delivery(delivered=2)
    assert drain(a) == [0, 1, 2, 3, 4]
    assert drain(b) == [0, 1, 2, 3, 4]


def test_a_full_buffer_drops_for_that_subscriber_only_and_counts_it() -> None:
    bus: Bus[int] = Bus()
    slow, fast = bus.subscribe(2), bus.subscribe(10)
    deliveries = [bus.publish(i) for i in range(5)]
    assert deliveries[:2] == [Delivery(delivered=2)] * 2
    assert deliveries[2:] == [Delivery(delivered=1, dropped=1)] * 3
    assert slow.dropped == 3
    assert slow.delivered == 2
    assert fast.dropped == 0
    assert drain(slow) == [0, 1], "the oldest buffered events are kept, newer ones dropped"
    assert drain(fast) == [0, 1, 2, 3, 4]
    stats = bus.stats()
    assert (stats.published, stats.delivered, stats.dropped) == (5, 7, 3)
    assert [(s.id, s.dropped, s.buffered) for s in stats.subscriptions] == [
        (slow.id, 3, 0),
        (fast.id, 0, 0),
    ]
    assert bus.publish(9) == Delivery(delivered=2), "drained buffers accept again"


def test_filters_select_and_a_raising_filter_never_reaches_the_publisher() -> None:
    bus: Bus[int] = Bus()
    even = bus.subscribe(10, filter=lambda e: e % 2 == 0)

    def broken(event: int) -> bool:
        raise RuntimeError("subscriber bug")

    buggy = bus.subscribe(10, filter=broken)
    assert bus.publish(1) == Delivery(filtered=2)
    assert bus.publish(2) == Delivery(delivered=1, filtered=1)
    assert drain(even) == [2]
    assert len(buggy) == 0
    assert buggy.filter_errors == 2
    assert bus.stats().filter_errors == 2


@pytest.mark.parametrize("maxsize", [0, -1, True, 1.5, None])
def test_unbounded_or_odd_buffers_are_refused(maxsize: object) -> None:
    with pytest.raises(ValueError, match="maxsize"):
        Bus[int]().subscribe(maxsize)  # type: ignore[arg-type]


def test_get_times_out_and_ends_when_closed() -> None:
    bus: Bus[int] = Bus()
    sub = bus.subscribe(4)
    with pytest.raises(TimeoutError):
        sub.get(timeout=0)
    bus.publish(1)
    bus.publish(2)
    sub.close()
    assert sub.closed
    assert bus.publish(3) == Delivery()
    assert sub.get() == 1
    assert sub.get(timeout=0) == 2
    with pytest.raises(eventbus.SubscriptionClosedError):
        sub.get()
    assert not bus.unsubscribe(sub)


def test_close_ends_everything_and_later_publishes_say_so() -> None:
    bus: Bus[int] = Bus()
    sub = bus.subscribe(1)
    bus.publish(1)
    bus.publish(2)
    bus.close()
    bus.close()
    assert bus.closed
    assert sub.closed
    assert bus.publish(3) == Delivery(closed=True)
    assert drain(sub) == [1]
    stats = bus.stats()
    assert (stats.published, stats.delivered, stats.dropped, stats.closed) == (2, 1, 1, True)
    assert stats.subscriptions == ()
    with pytest.raises(eventbus.BusClosedError):
        bus.subscribe(1)


def test_stats_keep_the_counts_of_closed_subscriptions() -> None:
    bus: Bus[int] = Bus()
    with bus.subscribe(1, filter=lambda e: e >= 0) as sub:
        bus.publish(1)
        bus.publish(2)
    assert sub.closed
    bus.publish(3)
    stats = bus.stats()
    assert (stats.delivered, stats.dropped) == (1, 1)
    assert sub.stats().closed


# --- unsubscribe during delivery ---------------------------------------------------------------


def test_unsubscribe_from_inside_a_filter_while_the_bus_delivers() -> None:
    bus: Bus[int] = Bus()
    subs: list[eventbus.Subscription[int]] = []

    def leave_at_three(event: int) -> bool:
        if event == 3:
            assert bus.unsubscribe(subs[0])
            assert bus.unsubscribe(subs[1]), "a later subscriber can be removed mid-delivery"
        return True

    subs.append(bus.subscribe(10, filter=leave_at_three))
    subs.append(bus.subscribe(10))
    keeper = bus.subscribe(10)
    for i in range(6):
        bus.publish(i)
    assert drain(subs[0]) == [0, 1, 2]
    assert drain(subs[1]) == [0, 1, 2]
    assert drain(keeper) == [0, 1, 2, 3, 4, 5]


@pytest.mark.anyio
async def test_unsubscribe_from_the_consuming_loop() -> None:
    bus: Bus[int] = Bus()
    sub = bus.subscribe(10)
    for i in range(5):
        bus.publish(i)
    seen: list[int] = []
    async for event in sub:
        seen.append(event)
        if event == 1:
            sub.close()
            bus.publish(99)
    assert seen == [0, 1, 2, 3, 4], "buffered events are still read, nothing new arrives"


def test_subscribe_and_unsubscribe_while_other_threads_publish() -> None:
    bus: Bus[int] = Bus()
    stop = threading.Event()
    errors: list[BaseException] = []
    frozen: list[tuple[eventbus.Subscription[int], int, int]] = []

    def publisher() -> None:
        try:
            i = 0
            while not stop.is_set():
                bus.publish(i)
                i += 1
        except BaseException as exc:
            errors.append(exc)

    def churn() -> None:
        try:
            for _ in range(300):
                sub = bus.subscribe(4)
                sub.close()
                frozen.append((sub, sub.delivered, sub.dropped))
        except BaseException as exc:
            errors.append(exc)

    publishers = [threading.Thread(target=publisher) for _ in range(3)]
    for t in publishers:
        t.start()
    churner = threading.Thread(target=churn)
    churner.start()
    churner.join()
    stop.set()
    for t in publishers:
        t.join()
    assert errors == []
    assert all(s.delivered == d and s.dropped == x for s, d, x in frozen), (
        "nothing enters a subscription after unsubscribe returned"
    )
    stats = bus.stats()
    assert stats.subscriptions == ()
    assert stats.delivered == sum(d for _, d, _ in frozen)
    assert stats.dropped == sum(x for _, _, x in frozen)


# --- threads and tasks -------------------------------------------------------------------------


def test_many_publisher_threads_lossless_and_lossy_subscribers_account_for_everything() -> None:
    threads, per_thread = 4, 500
    total = threads * per_thread
    bus: Bus[tuple[int, int]] = Bus()
    roomy = bus.subscribe(total)
    tiny = bus.subscribe(3)
    received: list[tuple[int, int]] = []

    def consume() -> None:
        while True:
            try:
                received.append(roomy.get(timeout=30))
            except eventbus.SubscriptionClosedError:
                return

    def publish(source: int) -> None:
        for n in range(per_thread):
            bus.publish((source, n))

    consumer = threading.Thread(target=consume)
    consumer.start()
    pubs = [threading.Thread(target=publish, args=(s,)) for s in range(threads)]
    for t in pubs:
        t.start()
    for t in pubs:
        t.join()
    bus.close()
    consumer.join()

    assert len(received) == total
    by_source: dict[int, list[int]] = defaultdict(list)
    for source, n in received:
        by_source[source].append(n)
    assert all(ns == list(range(per_thread)) for ns in by_source.values()), "per-thread order"
    assert tiny.delivered + tiny.dropped == total
    assert tiny.delivered == 3
    stats = bus.stats()
    assert stats.published == total
    assert stats.dropped == tiny.dropped


@pytest.mark.anyio
async def test_async_consumers_are_woken_by_publishers_in_other_threads() -> None:
    bus: Bus[int] = Bus()
    first, second = bus.subscribe(100), bus.subscribe(100, filter=lambda e: e % 10 == 0)
    got: dict[str, list[int]] = {"first": [], "second": []}

    async def consume(name: str, sub: eventbus.Subscription[int]) -> None:
        async for event in sub:
            got[name].append(event)

    def publish_range(start: int) -> None:
        for i in range(start, start + 50):
            bus.publish(i)

    with anyio.fail_after(30):
        async with anyio.create_task_group() as group:
            group.start_soon(consume, "first", first)
            group.start_soon(consume, "second", second)
            await anyio.wait_all_tasks_blocked()
            await anyio.to_thread.run_sync(publish_range, 0)
            raw = threading.Thread(target=publish_range, args=(50,))
            raw.start()
            await anyio.to_thread.run_sync(raw.join)
            bus.publish(100)  # from the loop itself
            while len(got["first"]) < 101:
                await anyio.lowlevel.checkpoint()
            bus.close()
    assert got["first"] == list(range(101))
    assert got["second"] == list(range(0, 101, 10))


@pytest.mark.anyio
async def test_publishing_from_async_code_never_waits_for_a_stalled_consumer() -> None:
    bus: Bus[int] = Bus()
    stalled = bus.subscribe(1)
    for i in range(2000):  # a publish that waited for room would hang here
        bus.publish(i)
    assert stalled.dropped == 1999
    assert stalled.get(timeout=0) == 0


@pytest.mark.anyio
async def test_close_releases_a_waiting_async_consumer_and_a_blocked_thread() -> None:
    bus: Bus[int] = Bus()
    in_task, in_thread = bus.subscribe(2), bus.subscribe(2)
    outcome: dict[str, object] = {}

    async def iterate() -> None:
        outcome["task"] = [e async for e in in_task]

    def block() -> None:
        try:
            in_thread.get()
        except eventbus.SubscriptionClosedError as exc:
            outcome["thread"] = exc

    thread = threading.Thread(target=block)
    thread.start()
    with anyio.fail_after(30):
        async with anyio.create_task_group() as group:
            group.start_soon(iterate)
            await anyio.wait_all_tasks_blocked()
            bus.close()
        await anyio.to_thread.run_sync(thread.join)
    assert outcome["task"] == []
    assert isinstance(outcome["thread"], eventbus.SubscriptionClosedError)


@pytest.mark.anyio
async def test_a_cancelled_consumer_loses_no_event() -> None:
    bus: Bus[int] = Bus()
    sub = bus.subscribe(4)
    with anyio.fail_after(30):
        async with anyio.create_task_group() as group:

            async def wait_one() -> None:
                await sub.__anext__()

            group.start_soon(wait_one)
            await anyio.wait_all_tasks_blocked()
            group.cancel_scope.cancel()
    bus.publish(7)
    assert await sub.__anext__() == 7
    assert sub._waiters == []


@pytest.mark.anyio
async def test_waking_a_waiter_that_went_away_is_harmless() -> None:
    # A waiter can be cancelled, or its loop closed, between a publisher taking it and waking it.
    loop = asyncio.get_running_loop()
    complaints: list[dict[str, object]] = []
    loop.set_exception_handler(lambda _loop, context: complaints.append(context))
    try:
        cancelled: asyncio.Future[None] = loop.create_future()
        cancelled.cancel()
        gone = asyncio.new_event_loop()
        orphan: asyncio.Future[None] = gone.create_future()
        gone.close()
        eventbus._wake([(loop, cancelled), (gone, orphan)])
        await anyio.lowlevel.checkpoint()
        await anyio.lowlevel.checkpoint()
    finally:
        loop.set_exception_handler(None)
    assert complaints == []
    assert not orphan.done()


# --- keep the newest (a FIFO that loses its oldest) ---------------------------------------------


def test_a_keep_newest_subscription_drops_its_oldest_event_and_says_so() -> None:
    bus: Bus[int] = Bus()
    fifo = bus.subscribe(2, keep_newest=True)
    plain = bus.subscribe(2)
    assert bus.publish(1) == Delivery(delivered=2)
    assert bus.publish(2) == Delivery(delivered=2)
    # the plain one drops the new event, the FIFO lets its oldest go and takes it
    assert bus.publish(3) == Delivery(delivered=1, dropped=2, displaced=1)
    assert drain(fifo) == [2, 3]
    assert drain(plain) == [1, 2]
    assert fifo.dropped == 1
    assert plain.dropped == 1
    assert bus.stats().dropped == 2


def test_get_nowait_reads_without_waiting_even_after_close() -> None:
    bus: Bus[int] = Bus()
    sub = bus.subscribe(4)
    assert sub.get_nowait() is None
    bus.publish(7)
    bus.close()
    assert sub.get_nowait() == 7
    assert sub.get_nowait() is None


def test_a_thread_blocked_in_get_is_woken_by_a_publish() -> None:
    """Publishers notify the condition only while a thread sleeps in `get`; that thread must
    still be woken by the next publish (a negative window: it fails only by waiting 30 s)."""
    bus: Bus[int] = Bus()
    sub = bus.subscribe(10)
    got: list[int] = []
    reader = threading.Thread(target=lambda: got.append(sub.get()))
    reader.start()
    while not sub._sleepers:  # the reader is asleep in get()
        time.sleep(0.001)
    bus.publish(7)
    reader.join(timeout=30)
    assert not reader.is_alive()
    assert got == [7]
