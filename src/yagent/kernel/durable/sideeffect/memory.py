"""sideeffect memory store: the in-process reference `ClockedStore`.

Contract: every operation is atomic within this process (one lock; the rows an operation writes
become visible together, or not at all when the judgement refuses). It passes the same contract
suite as the SQLite store because both run the same `rules`. It offers nothing across processes
and nothing survives the process: use `SqliteStore` where a crash must leave a trace.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import TypeVar

from yagent.kernel.durable.sideeffect import rules
from yagent.kernel.durable.sideeffect.store import RowStore, Tx
from yagent.kernel.durable.sideeffect.types import Clock, State

T = TypeVar("T")

_OPEN = (State.IN_FLIGHT, State.UNCERTAIN)


class _MemoryTx:
    """Reads see committed rows; writes are buffered and land only when the operation returns."""

    __slots__ = ("_gates", "_keys", "_writes")

    def __init__(self, keys: dict[str, rules.KeyRow], gates: dict[str, rules.GateRow]) -> None:
        self._keys = keys
        self._gates = gates
        self._writes: list[rules.Write] = []

    def key(self, key: str) -> rules.KeyRow | None:
        return self._keys.get(key)

    def gate(self, resource: str) -> rules.GateRow | None:
        return self._gates.get(resource)

    def put(self, write: rules.Write) -> None:
        self._writes.append(write)

    def open_keys(self) -> Sequence[rules.KeyRow]:
        return [self._keys[k] for k in sorted(self._keys) if self._keys[k].state in _OPEN]

    def commit(self) -> None:
        for write in self._writes:
            if write.key is not None:
                self._keys[write.key.key] = write.key
            if write.gate is not None:
                self._gates[write.gate.resource] = write.gate


class MemoryStore(RowStore):
    """Key and gate rows in two dicts behind one lock (safe from threads and tasks alike)."""

    def __init__(self, clock: Clock | None = None) -> None:
        super().__init__(clock)
        self._lock = threading.Lock()
        self._keys: dict[str, rules.KeyRow] = {}
        self._gates: dict[str, rules.GateRow] = {}

    async def _transact(self, fn: Callable[[Tx, float], T], *, write: bool) -> T:
        with self._lock:
            tx = _MemoryTx(self._keys, self._gates)
            result = fn(tx, self._clock.now())
            if write:
                tx.commit()
            return result
