"""The dispatcher: a bounded normal queue and a critical FIFO side queue, critical read first.

`send()` never blocks and never raises on a full queue: it applies the queue's loss rule, counts
the drop and logs a warning. `receive()` waits for the next event, critical first. `close()` ends
receivers with `DispatcherClosedError` once both queues are drained. Single event loop; from other
threads use `send_threadsafe`.
The two queues are two subscriptions of the kernel's one event bus (`kernel.trace.eventbus`): the
normal one drops the new event when full, the critical one (`keep_newest`) lets its oldest go.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.from_thread

from yagent.kernel.trace import eventbus

log = logging.getLogger("yagent.messaging")

USER_HELP_NEEDED = "user_help_needed"
USER_HELP_RESPONSE = "user_help_response"
CRITICAL_TYPES: frozenset[str] = frozenset({USER_HELP_NEEDED, USER_HELP_RESPONSE})


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
        self._bus: eventbus.Bus[Event] = eventbus.Bus()
        self._critical = self._bus.subscribe(critical_maxsize, self.is_critical, keep_newest=True)
        self._normal = self._bus.subscribe(maxsize, self._is_normal)
        self._wakeup = anyio.Event()
        self._closed = False
        self.stats = Stats()

    def is_critical(self, event: Event) -> bool:
        return event.type in self._critical_types

    def _is_normal(self, event: Event) -> bool:
        return event.type not in self._critical_types

    def send(self, event: Event) -> bool:
        """Queue `event`; False when it (or, for critical events, the oldest one) was dropped."""
        if self._closed:
            log.warning("dispatcher closed: dropped %s event", event.type)
            self.stats.dropped_newest += 1
            return False
        delivery = self._bus.publish(event)
        if delivery.displaced:
            self.stats.dropped_oldest_critical += 1
            log.warning("critical queue full: dropped the oldest critical event for %s", event.type)
        elif delivery.dropped:
            self.stats.dropped_newest += 1
            log.warning("event queue full: dropped %s event", event.type)
            return False
        self.stats.sent += 1
        self._wakeup.set()
        return not delivery.displaced

    def send_threadsafe(self, event: Event) -> None:
        """`send` from a worker thread started by anyio (`to_thread.run_sync`)."""
        anyio.from_thread.run_sync(self.send, event)

    def receive_nowait(self) -> Event | None:
        event = self._critical.get_nowait()
        return event if event is not None else self._normal.get_nowait()

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

    def close(self) -> None:
        self._closed = True
        self._bus.close()  # what is buffered stays readable
        self._wakeup.set()

    def pending(self) -> tuple[int, int]:
        """(critical, normal) events waiting."""
        return len(self._critical), len(self._normal)
