"""The dispatcher: a bounded normal queue and a critical FIFO side queue, critical read first.

`send()` never blocks and never raises on a full queue: it applies the queue's loss rule, counts
the drop and logs a warning. `receive()` waits for the next event, critical first; `next_in_order()`
is for a display: the next event in publish order across both queues (a question after the tool
call it is about), a critical event still kept apart from a full normal queue. `close()` ends
receivers with `DispatcherClosedError` once both queues are drained. Single event loop; from other
threads use `send_threadsafe`.
`ready(linger)` is for a display that drains in batches (`receive_nowait` until None): it returns
at once (after a checkpoint) when an event waits; otherwise once the first arrives, then up to
`linger` seconds more while later events gather — one wake-up per burst, not one per event. The
linger ends early, never late: at a critical event, when the normal queue is half full (a burst
is never dropped for the linger) and at `close()`. One consumer lingers at a time.
Each queue is the one subscription of its own kernel event bus (`kernel.trace.eventbus`), and
`send` publishes an event on its type's bus (no filter runs per event): the normal queue drops the
new event when full, the critical one (`keep_newest`) lets its oldest go. Every drop is counted
per event type; `take_drops()` hands a display the counts since it last asked, so it can say what
it did not show.
A lossless consumer (`yagent run --json`) is not a queue reader: `write_through(writer)` hands
every event to `writer` inside `send`, in publish order, before anything is queued. Normal events
are then not queued at all (nothing to drop); critical ones are also queued, for the pump that
routes answers. A writer that blocks blocks the publisher (back-pressure: the run waits for the
writer). A writer that raises is detached (logged, `Stats.writer_error`) and the queues take over
with their loss rules — `send` still never raises.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.from_thread
import anyio.lowlevel

from yagent.kernel.trace import eventbus

log = logging.getLogger("yagent.messaging")

USER_HELP_NEEDED = "user_help_needed"
USER_HELP_RESPONSE = "user_help_response"
CRITICAL_TYPES: frozenset[str] = frozenset({USER_HELP_NEEDED, USER_HELP_RESPONSE})
LINGER = 0.02
"""Seconds a display lets events gather after the first before it shows them (`ready`): below a
screen frame, and below the streamed text's own throttle (`cli.stream.MIN_INTERVAL`)."""


@dataclass(frozen=True, slots=True)
class Event:
    type: str
    payload: Mapping[str, Any] = field(default_factory=dict)
    delegation_id: str = ""
    ts: float = field(default_factory=time.time)


class DispatcherClosedError(Exception):
    """Raised by `receive()` after `close()` once nothing is left to deliver."""


@dataclass(slots=True)
class Stats:
    sent: int = 0
    dropped_newest: int = 0
    dropped_oldest_critical: int = 0
    written: int = 0  # handed to the write-through writer
    writer_error: str = ""  # why the writer was detached ("" while it works or was never set)
    dropped_by_type: dict[str, int] = field(default_factory=dict)


Writer = Callable[[Event], None]


class Dispatcher:
    def __init__(
        self,
        maxsize: int = 1024,
        critical_maxsize: int = 64,
        critical_types: frozenset[str] = CRITICAL_TYPES,
    ) -> None:
        if maxsize < 1 or critical_maxsize < 1:
            raise ValueError("dispatcher queue sizes must be at least 1")
        self._critical_types = critical_types
        self._critical_bus: eventbus.Bus[Event] = eventbus.Bus()
        self._normal_bus: eventbus.Bus[Event] = eventbus.Bus()
        self._critical = self._critical_bus.subscribe(critical_maxsize, keep_newest=True)
        self._normal = self._normal_bus.subscribe(maxsize)
        # publish order across the queues: per critical event waiting, how many normal events
        # had been accepted before it; and how many normal events have been taken
        self._marks: deque[int] = deque()
        self._normal_accepted = 0
        self._normal_taken = 0
        self._wakeup = anyio.Event()
        self._lingering = False  # a consumer in `ready` lets events gather: not woken per send
        self._half = max(maxsize // 2, 1)
        self._closed = False
        self._writer: Writer | None = None
        self._unreported: dict[str, int] = {}
        self.stats = Stats()

    def write_through(self, writer: Writer) -> None:
        """Hand every event to `writer` at `send` from now on (module contract)."""
        self._writer = writer

    def writes_through(self) -> bool:
        return self._writer is not None

    def take_drops(self) -> dict[str, int]:
        """Events dropped since the last call, per type (module contract)."""
        drops, self._unreported = self._unreported, {}
        return drops

    def _dropped(self, kind: str) -> None:
        self.stats.dropped_by_type[kind] = self.stats.dropped_by_type.get(kind, 0) + 1
        self._unreported[kind] = self._unreported.get(kind, 0) + 1

    def _write(self, event: Event) -> bool:
        """Hand `event` to the writer; False when there is none or it has just failed."""
        writer = self._writer
        if writer is None:
            return False
        try:
            writer(event)
        except Exception as exc:  # module contract: send never raises
            self._writer = None
            self.stats.writer_error = f"{type(exc).__name__}: {exc}"
            log.warning("event writer failed, events are queued from now on: %s", exc)
            return False
        self.stats.written += 1
        return True

    def is_critical(self, event: Event) -> bool:
        return event.type in self._critical_types

    def send(self, event: Event) -> bool:
        """Queue `event`; False when it (or, for critical events, the oldest one) was dropped."""
        critical = event.type in self._critical_types
        if self._write(event) and (not critical or self._closed):
            self.stats.sent += 1  # written; a critical one is queued too while a pump may read
            return True
        if self._closed:
            log.warning("dispatcher closed: dropped %s event", event.type)
            self.stats.dropped_newest += 1
            self._dropped(event.type)
            return False
        delivery = (self._critical_bus if critical else self._normal_bus).publish(event)
        if delivery.displaced:
            self.stats.dropped_oldest_critical += 1
            self._dropped("critical (oldest)")
            self._marks.popleft()
            log.warning("critical queue full: dropped the oldest critical event for %s", event.type)
        elif delivery.dropped:
            self.stats.dropped_newest += 1
            if not self._unreported.get(event.type):  # the first since the display last said
                log.warning("event queue full: dropping %s events", event.type)
            self._dropped(event.type)
            return False
        if critical:
            self._marks.append(self._normal_accepted)
        else:
            self._normal_accepted += 1
        self.stats.sent += 1
        if not self._lingering or critical or len(self._normal) >= self._half:
            self._wakeup.set()
        return not delivery.displaced

    def send_threadsafe(self, event: Event) -> None:
        """`send` from a worker thread started by anyio (`to_thread.run_sync`)."""
        anyio.from_thread.run_sync(self.send, event)

    def receive_nowait(self) -> Event | None:
        event = self._critical.get_nowait()
        if event is not None:
            self._marks.popleft()
            return event
        return self._take_normal()

    def next_in_order(self) -> Event | None:
        """The next event in publish order across both queues (module contract), or None."""
        if self._marks and self._marks[0] <= self._normal_taken:
            return self.receive_nowait()  # every normal event sent before it has been taken
        event = self._take_normal()
        return event if event is not None else self.receive_nowait()

    def _take_normal(self) -> Event | None:
        event = self._normal.get_nowait()
        if event is not None:
            self._normal_taken += 1
        return event

    async def receive(self) -> Event:
        while True:
            event = self.receive_nowait()
            if event is not None:
                return event
            if self._closed:
                raise DispatcherClosedError("dispatcher closed")
            if self._wakeup.is_set():  # consumed wake-up: every waiter shares the fresh one
                self._wakeup = anyio.Event()
            await self._wakeup.wait()

    async def ready(self, linger: float = 0.0) -> None:
        """Return when an event waits (module contract); `DispatcherClosedError` once closed
        with nothing left."""
        if len(self._critical) or len(self._normal):
            await anyio.lowlevel.checkpoint()  # a batch after a batch: cancellation gets a turn
            return
        while not (len(self._critical) or len(self._normal)):
            if self._closed:
                raise DispatcherClosedError("dispatcher closed")
            if self._wakeup.is_set():
                self._wakeup = anyio.Event()
            await self._wakeup.wait()
        if linger <= 0 or self._closed or len(self._critical) or len(self._normal) >= self._half:
            return
        self._wakeup = anyio.Event()
        self._lingering = True
        try:
            with anyio.move_on_after(linger):
                await self._wakeup.wait()
        finally:
            self._lingering = False

    def close(self) -> None:
        self._closed = True
        self._critical_bus.close()  # what is buffered stays readable
        self._normal_bus.close()
        self._wakeup.set()

    def pending(self) -> tuple[int, int]:
        """(critical, normal) events waiting."""
        return len(self._critical), len(self._normal)
