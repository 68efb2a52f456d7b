"""The 22-case sidetest contract suite on every store: memory, SQLite, and SQLite through two
connections to one file (each operation alternates between them, as two processes would)."""

from __future__ import annotations

import itertools
from pathlib import Path

from yagent.kernel.durable.sideeffect import (
    Action,
    Backlog,
    Clock,
    ClockedStore,
    Grant,
    Lease,
    MemoryStore,
    Record,
    Resolution,
    SqliteStore,
)
from yagent.kernel.testing import sidetest


class TwoConnections:
    """A ClockedStore that sends each operation to the next of two SqliteStores on one file."""

    def __init__(self, path: Path) -> None:
        self.stores = (SqliteStore(path), SqliteStore(path))
        self._turn = itertools.cycle(self.stores)

    def _next(self) -> SqliteStore:
        return next(self._turn)

    def set_clock(self, clock: Clock) -> None:
        for store in self.stores:
            store.set_clock(clock)

    def close(self) -> None:
        for store in self.stores:
            store.close()

    async def acquire(self, action: Action, holder: str, ttl: float) -> Grant:
        return await self._next().acquire(action, holder, ttl)

    async def renew(self, lease: Lease, ttl: float) -> Lease:
        return await self._next().renew(lease, ttl)

    async def complete(self, lease: Lease, result: bytes) -> None:
        await self._next().complete(lease, result)

    async def release(self, lease: Lease) -> None:
        await self._next().release(lease)

    async def abandon(self, lease: Lease, reason: str) -> None:
        await self._next().abandon(lease, reason)

    async def mark_uncertain(self, lease: Lease, reason: str) -> None:
        await self._next().mark_uncertain(lease, reason)

    async def resolve_uncertain(
        self, action: Action, applied: bool, result: bytes | None = None
    ) -> Resolution:
        return await self._next().resolve_uncertain(action, applied, result)

    async def lookup(self, key: str) -> Record | None:
        return await self._next().lookup(key)

    async def pending(self, limit: int = 100) -> Backlog:
        return await self._next().pending(limit)


def _two(path: Path) -> ClockedStore:
    return TwoConnections(path / "shared.db")


TestMemoryContract = sidetest.suite(lambda _: MemoryStore(), name="MemoryContract")
TestSqliteContract = sidetest.suite(lambda d: SqliteStore(d / "s.db"), name="SqliteContract")
TestSqliteTwoConnectionsContract = sidetest.suite(_two, name="SqliteTwoConnectionsContract")


def test_suite_has_the_22_named_clauses() -> None:
    families = [case.family for case in sidetest.CASES]
    assert (families.count("lease"), families.count("uncertain"), families.count("intent")) == (
        11,
        5,
        6,
    )
    assert len(set(sidetest.names())) == 22
    assert len([n for n in dir(TestSqliteContract) if n.startswith("test_")]) == 22
