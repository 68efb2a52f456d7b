"""eventbus: in-process lossy broadcast that never blocks a publisher.

Guarantees:
- `Bus.publish(event)` never blocks, from async code or from any thread: it offers the event to
  each subscriber's bounded buffer and returns a `Delivery` saying how many took it, how many
  dropped it and how many filtered it out. It never waits for a consumer.
- When a subscriber's buffer is full, the event is dropped for that subscriber only; the drop is
  counted on the subscription (`dropped`) and in the bus `stats()` snapshot. Nothing is dropped
  silently. A subscription made with `keep_newest=True` is a FIFO that loses its *oldest*
  buffered event instead and takes the new one (counted as `dropped` and as `displaced`).
- A `Subscription` is an async iterator (asyncio backend, anyio's default) and has a blocking,
  thread-friendly `get(timeout)`. Events arrive in publish order per publisher thread.
- `unsubscribe` (or `Subscription.close`) is safe at any time: from inside a filter while the
  bus is delivering, from the consuming loop, or from another thread while publishers run. After
  it returns no new event enters that subscription; events already buffered can still be read,
  then iteration ends. `Bus.close()` ends every subscription the same way.
- A filter that raises does not reach the publisher: the event is not delivered to that
  subscriber and the failure is counted (`filter_errors`).
Refuses: `maxsize < 1` (an unbounded buffer is not lossy, it is a leak); subscribing to a closed
bus. Publishing to a closed bus delivers nothing and says so (`Delivery.closed`).
Leaves to the host: persistence. The bus is lossy by design, so an event that must survive is
written by the host at the publish point, before or alongside `publish`, never by a subscriber.
Events are shared between subscribers, not copied: publish immutable values.
"""

from __future__ import annotations

import asyncio
import collections
import itertools
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

import anyio.lowlevel

E = TypeVar("E")


class EventbusError(Exception):
    """Root of this module's errors."""


class BusClosedError(EventbusError):
    """The bus is closed: nothing new can subscribe."""


class SubscriptionClosedError(EventbusError):
    """The subscription is closed and its buffer is empty: there is nothing more to get."""


@dataclass(frozen=True, slots=True)
class Delivery:
    """What one `publish` did."""

    delivered: int = 0
    dropped: int = 0
    filtered: int = 0
    closed: bool = False
    displaced: int = 0  # of the drops: an oldest event let go so that this one was kept


@dataclass(frozen=True, slots=True)
class SubscriptionStats:
    id: int
    maxsize: int
    buffered: int
    delivered: int
    dropped: int
    filter_errors: int
    closed: bool


@dataclass(frozen=True, slots=True)
class BusStats:
    """A snapshot. Totals include subscriptions that have since closed."""

    published: int
    delivered: int
    dropped: int
    filter_errors: int
    closed: bool
    subscriptions: tuple[SubscriptionStats, ...]


_DELIVERED: dict[tuple[int, int], Delivery] = {}


def _delivered(count: int, filtered: int = 0) -> Delivery:
    """The common answers (nothing dropped), shared per counts: a Delivery is immutable."""
    found = _DELIVERED.get((count, filtered))
    if found is None:
        found = _DELIVERED.setdefault((count, filtered), Delivery(count, filtered=filtered))
    return found


class Subscription(Generic[E]):
    """One subscriber's bounded buffer."""

    __slots__ = (
        "_buffer", "_bus", "_closed", "_delivered", "_dropped", "_filter", "_filter_errors",
        "_keep_newest", "_lock", "_ready", "_sleepers", "_waiters", "id", "maxsize",
    )  # fmt: skip

    def __init__(
        self,
        bus: Bus[E],
        sub_id: int,
        maxsize: int,
        filter: Callable[[E], bool] | None,
        keep_newest: bool = False,
    ) -> None:
        self._bus = bus
        self.id = sub_id
        self.maxsize = maxsize
        self._filter = filter
        self._keep_newest = keep_newest
        self._lock = threading.Lock()
        self._ready = threading.Condition(self._lock)
        self._buffer: collections.deque[E] = collections.deque()
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = []
        self._sleepers = 0  # threads blocked in `get`: only they need the condition notified
        self._closed = False
        self._delivered = 0
        self._dropped = 0
        self._filter_errors = 0

    @property
    def dropped(self) -> int:
        """Events dropped for this subscriber because its buffer was full."""
        return self._dropped

    @property
    def delivered(self) -> int:
        return self._delivered

    @property
    def filter_errors(self) -> int:
        return self._filter_errors

    @property
    def closed(self) -> bool:
        return self._closed

    def __len__(self) -> int:
        return len(self._buffer)

    def stats(self) -> SubscriptionStats:
        with self._lock:
            return SubscriptionStats(
                self.id, self.maxsize, len(self._buffer), self._delivered, self._dropped,
                self._filter_errors, self._closed,
            )  # fmt: skip

    def _offer(self, event: E) -> str:
        """Called by publishers. Takes only this subscription's short lock; never waits."""
        if self._filter is not None:
            try:
                if not self._filter(event):
                    return "filtered"
            except Exception:  # a subscriber's bug must not reach the publisher
                with self._lock:
                    self._filter_errors += 1
                return "filtered"
        with self._lock:
            if self._closed:
                return "closed"
            status = "delivered"
            if len(self._buffer) >= self.maxsize:
                self._dropped += 1
                if not self._keep_newest:
                    return "dropped"
                self._buffer.popleft()
                status = "displaced"
            self._buffer.append(event)
            self._delivered += 1
            if self._sleepers:
                self._ready.notify()
            if not self._waiters:
                return status
            waiters, self._waiters = self._waiters, []
        _wake(waiters)
        return status

    def _shut(self) -> None:
        with self._lock:
            self._closed = True
            self._ready.notify_all()
            waiters, self._waiters = self._waiters, []
        _wake(waiters)

    def close(self) -> None:
        """Unsubscribe. Buffered events stay readable; then iteration ends."""
        self._bus.unsubscribe(self)

    def get_nowait(self) -> E | None:
        """The next buffered event, or None when there is none (closed or not); never waits."""
        with self._lock:
            return self._buffer.popleft() if self._buffer else None

    def get(self, timeout: float | None = None) -> E:
        """Block the calling thread for the next event (not for use on an event loop thread).

        Raises `TimeoutError` after `timeout` seconds, `SubscriptionClosedError` when closed and
        drained.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._ready:
            while not self._buffer:
                if self._closed:
                    raise SubscriptionClosedError(f"eventbus: subscription {self.id} is closed")
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    raise TimeoutError(f"eventbus: no event within {timeout} s")
                self._sleepers += 1
                try:
                    self._ready.wait(remaining)
                finally:
                    self._sleepers -= 1
            return self._buffer.popleft()

    def __aiter__(self) -> Subscription[E]:
        return self

    async def __anext__(self) -> E:
        # Checkpoint before taking an event so a cancelled consumer never loses one in hand.
        await anyio.lowlevel.checkpoint()
        while True:
            with self._lock:
                if self._buffer:
                    return self._buffer.popleft()
                if self._closed:
                    raise StopAsyncIteration
                loop = asyncio.get_running_loop()
                future: asyncio.Future[None] = loop.create_future()
                self._waiters.append((loop, future))
            try:
                await future
            finally:
                # Cancelled while waiting: forget the waiter; the event, if any, stays buffered.
                with self._lock:
                    if (loop, future) in self._waiters:
                        self._waiters.remove((loop, future))

    def __enter__(self) -> Subscription[E]:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def _release(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


def _wake(waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]]) -> None:
    for loop, future in waiters:
        # call_soon_threadsafe only schedules: it never waits for the loop, from any thread.
        try:
            loop.call_soon_threadsafe(_release, future)
        except RuntimeError:  # that loop is closed; nobody is waiting on it any more
            continue


class Bus(Generic[E]):
    """The broadcast point. Subscribers are held in an immutable tuple replaced on change, so
    publishers read it without waiting for subscribe/unsubscribe."""

    __slots__ = ("_closed", "_ids", "_lock", "_published", "_retired", "_subscriptions")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._subscriptions: tuple[Subscription[E], ...] = ()
        self._ids = itertools.count(1)
        self._closed = False
        self._published = 0
        self._retired = (0, 0, 0)  # delivered, dropped, filter errors of closed subscriptions

    @property
    def closed(self) -> bool:
        return self._closed

    def subscribe(
        self, maxsize: int, filter: Callable[[E], bool] | None = None, *, keep_newest: bool = False
    ) -> Subscription[E]:
        """A new subscription with a buffer of `maxsize` events, optionally filtered; with
        `keep_newest` a full buffer lets its oldest event go instead of the new one."""
        if isinstance(maxsize, bool) or not isinstance(maxsize, int) or maxsize < 1:
            raise ValueError(f"eventbus: maxsize must be a positive int, got {maxsize!r}")
        with self._lock:
            if self._closed:
                raise BusClosedError("eventbus: the bus is closed")
            subscription = Subscription(self, next(self._ids), maxsize, filter, keep_newest)
            self._subscriptions = (*self._subscriptions, subscription)
        return subscription

    def unsubscribe(self, subscription: Subscription[E]) -> bool:
        """Stop delivering to `subscription`; False when it was not subscribed (any more)."""
        with self._lock:
            if subscription not in self._subscriptions:
                return False
            self._subscriptions = tuple(s for s in self._subscriptions if s is not subscription)
            self._retire(subscription)
        return True

    def _retire(self, subscription: Subscription[E]) -> None:
        # Shut first: after this no offer can change its counters, so the totals stay exact.
        subscription._shut()
        stats = subscription.stats()
        delivered, dropped, errors = self._retired
        self._retired = (
            delivered + stats.delivered, dropped + stats.dropped, errors + stats.filter_errors
        )  # fmt: skip

    def publish(self, event: E) -> Delivery:
        """Offer `event` to every subscriber without waiting for any of them."""
        with self._lock:
            if self._closed:
                return Delivery(closed=True)
            self._published += 1
            subscriptions = self._subscriptions
        delivered = dropped = filtered = displaced = 0
        for subscription in subscriptions:
            status = subscription._offer(event)
            if status == "delivered":
                delivered += 1
            elif status == "dropped":
                dropped += 1
            elif status == "filtered":
                filtered += 1
            elif status == "displaced":
                displaced += 1
        if not (dropped or displaced):
            return _delivered(delivered, filtered)
        return Delivery(delivered + displaced, dropped + displaced, filtered, displaced=displaced)

    def close(self) -> None:
        """Close the bus: every subscription ends once drained; later publishes deliver nothing."""
        with self._lock:
            self._closed = True
            subscriptions, self._subscriptions = self._subscriptions, ()
            for subscription in subscriptions:
                self._retire(subscription)

    def stats(self) -> BusStats:
        with self._lock:
            live = tuple(s.stats() for s in self._subscriptions)
            delivered, dropped, errors = self._retired
            return BusStats(
                published=self._published,
                delivered=delivered + sum(s.delivered for s in live),
                dropped=dropped + sum(s.dropped for s in live),
                filter_errors=errors + sum(s.filter_errors for s in live),
                closed=self._closed,
                subscriptions=live,
            )
