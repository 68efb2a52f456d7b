"""sideeffect sink: the downstream contract that makes a stale holder's late write harmless.

Contract of a `FencedSink`: `write(lease, value)` compares the lease's fence with the highest fence
the sink has accepted for that resource and writes, in ONE atomic operation; a fence lower than
that is refused with `StaleFenceError` and nothing is written. Equal fences are accepted (one
attempt may write several times). Compare-then-write in two steps is not a FencedSink: two
holders would both read the same old high-water mark, both pass, and the older write could land
last. `fence_accepts` is the one comparison every sink uses.
`MemorySink` is the in-process reference: it records every accepted write in order.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar, runtime_checkable

from yagent.kernel.durable.sideeffect.errors import StaleFenceError
from yagent.kernel.durable.sideeffect.types import Lease

V = TypeVar("V")
V_contra = TypeVar("V_contra", contravariant=True)


def fence_accepts(high_water: int | None, fence: int) -> bool:
    """Whether a write with `fence` may land after `high_water` (None: nothing accepted yet)."""
    return high_water is None or fence >= high_water


@runtime_checkable
class FencedSink(Protocol[V_contra]):
    """A downstream that refuses writes from stale lease holders, atomically."""

    async def write(self, lease: Lease, value: V_contra) -> None: ...


@dataclass(frozen=True, slots=True)
class Entry(Generic[V]):
    """One accepted write."""

    resource: str
    key: str
    fence: int
    value: V


class MemorySink(Generic[V]):
    """The reference `FencedSink`: per-resource high-water marks and an ordered log, one lock."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._high: dict[str, int] = {}
        self._log: list[Entry[V]] = []

    async def write(self, lease: Lease, value: V) -> None:
        with self._lock:
            high = self._high.get(lease.resource)
            if high is not None and not fence_accepts(high, lease.fence):
                raise StaleFenceError(lease.resource, lease.fence, high)
            self._high[lease.resource] = lease.fence
            self._log.append(Entry(lease.resource, lease.key, lease.fence, value))

    def high_water(self, resource: str) -> int | None:
        with self._lock:
            return self._high.get(resource)

    def entries(self, resource: str | None = None) -> tuple[Entry[V], ...]:
        """Accepted writes in order, for one resource or all."""
        with self._lock:
            return tuple(e for e in self._log if resource is None or e.resource == resource)
