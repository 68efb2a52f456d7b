"""sideeffect store: the `Store` protocol every backend implements, and `RowStore`, its shared body.

Contract of a `Store` (all operations atomic; expiry judged by the store's clock, read inside the
operation's transaction):
- `acquire(action, holder, ttl)` judges idempotency key, intent and resource gate in ONE atomic
  step — completed > uncertain > in flight (live ⇒ CONTENDED; over ⇒ UNCERTAIN, needs
  reconciliation, unless the action is `SAFE` ⇒ re-granted) > resource held (CONTENDED) > GRANTED.
  A grant records the execution intent (IN_FLIGHT) with a fence one above the resource's last.
- `renew` extends a live lease and keeps its fence; refused once the gate changed hands, was
  released or expired. `complete` records the result (live holder only) and releases the gate.
  `release` releases the gate only: the intent stays, so the key needs reconciliation.
- `abandon` (the attempt certainly did not apply) withdraws the intent and releases the gate; only
  the attempt whose fence holds the intent may. `mark_uncertain` turns the intent uncertain; a
  stale fence is refused. `resolve_uncertain` settles an uncertain (or over) key from downstream
  facts: first resolution wins, no fence is checked.
- Refusals are `LeaseError`s; a backend failure is a `StoreError` and changed nothing.
A `ClockedStore` also takes an injected clock (`set_clock`): the contract suite needs it to make
expiry happen; a store whose clock cannot be injected cannot prove its expiry rules.

`RowStore` implements all of this over `rules` given one primitive, `_transact(fn, write=...)`:
run `fn(tx, now)` as one atomic transaction. Memory and SQLite backends only supply that.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Sequence
from typing import Protocol, TypeVar, runtime_checkable

from yagent.kernel.durable.sideeffect import rules
from yagent.kernel.durable.sideeffect.errors import InvalidArgumentError
from yagent.kernel.durable.sideeffect.types import (
    Action,
    Backlog,
    Clock,
    Grant,
    Lease,
    Record,
    Resolution,
    SystemClock,
    require_holder,
    require_result,
    require_ttl,
)

T = TypeVar("T")


@runtime_checkable
class Store(Protocol):
    """The at-most-once bookkeeping of side effects (see the module docstring for the contract)."""

    async def acquire(self, action: Action, holder: str, ttl: float) -> Grant: ...

    async def renew(self, lease: Lease, ttl: float) -> Lease: ...

    async def complete(self, lease: Lease, result: bytes) -> None: ...

    async def release(self, lease: Lease) -> None: ...

    async def abandon(self, lease: Lease, reason: str) -> None: ...

    async def mark_uncertain(self, lease: Lease, reason: str) -> None: ...

    async def resolve_uncertain(
        self, action: Action, applied: bool, result: bytes | None = None
    ) -> Resolution: ...

    async def lookup(self, key: str) -> Record | None: ...

    async def pending(self, limit: int = 100) -> Backlog: ...


@runtime_checkable
class ClockedStore(Store, Protocol):
    """A store whose expiry judgements read an injected clock."""

    def set_clock(self, clock: Clock) -> None: ...


class Tx(Protocol):
    """One open transaction of a row backend."""

    def key(self, key: str) -> rules.KeyRow | None: ...

    def gate(self, resource: str) -> rules.GateRow | None: ...

    def put(self, write: rules.Write) -> None: ...

    def open_keys(self) -> Sequence[rules.KeyRow]:
        """Rows in state IN_FLIGHT or UNCERTAIN, ordered by key."""
        ...


def _require_lease(lease: object) -> Lease:
    if not isinstance(lease, Lease):
        raise InvalidArgumentError(f"sideeffect: expected a Lease, got {type(lease).__name__}")
    return lease


def _require_action(action: object) -> Action:
    if not isinstance(action, Action):
        raise InvalidArgumentError(f"sideeffect: expected an Action, got {type(action).__name__}")
    return action


class RowStore(abc.ABC):
    """A `ClockedStore` over key and gate rows; subclasses supply the atomic transaction."""

    def __init__(self, clock: Clock | None = None) -> None:
        self._clock: Clock = clock if clock is not None else SystemClock()

    def set_clock(self, clock: Clock) -> None:
        if not isinstance(clock, Clock):
            raise InvalidArgumentError("sideeffect: clock must have a now() method")
        self._clock = clock

    @abc.abstractmethod
    async def _transact(self, fn: Callable[[Tx, float], T], *, write: bool) -> T:
        """Run `fn(tx, now)` atomically; `now` is read from the clock once the transaction holds
        its lock. When `fn` raises, nothing is written and the exception propagates."""

    async def acquire(self, action: Action, holder: str, ttl: float) -> Grant:
        act, who, span = _require_action(action), require_holder(holder), require_ttl(ttl)

        def op(tx: Tx, now: float) -> Grant:
            grant, change = rules.acquire(
                tx.key(act.key), tx.gate(act.resource), act, who, span, now
            )
            tx.put(change)
            return grant

        return await self._transact(op, write=True)

    async def renew(self, lease: Lease, ttl: float) -> Lease:
        held, span = _require_lease(lease), require_ttl(ttl)

        def op(tx: Tx, now: float) -> Lease:
            renewed, change = rules.renew(tx.key(held.key), tx.gate(held.resource), held, span, now)
            tx.put(change)
            return renewed

        return await self._transact(op, write=True)

    async def complete(self, lease: Lease, result: bytes) -> None:
        held, data = _require_lease(lease), require_result(result)

        def op(tx: Tx, now: float) -> None:
            tx.put(rules.complete(tx.key(held.key), tx.gate(held.resource), held, data, now))

        await self._transact(op, write=True)

    async def release(self, lease: Lease) -> None:
        held = _require_lease(lease)

        def op(tx: Tx, now: float) -> None:
            tx.put(rules.release(tx.key(held.key), tx.gate(held.resource), held, now))

        await self._transact(op, write=True)

    async def abandon(self, lease: Lease, reason: str) -> None:
        held, why = _require_lease(lease), str(reason)

        def op(tx: Tx, now: float) -> None:
            tx.put(rules.abandon(tx.key(held.key), tx.gate(held.resource), held, why, now))

        await self._transact(op, write=True)

    async def mark_uncertain(self, lease: Lease, reason: str) -> None:
        held, why = _require_lease(lease), str(reason)

        def op(tx: Tx, now: float) -> None:
            tx.put(rules.mark_uncertain(tx.key(held.key), tx.gate(held.resource), held, why, now))

        await self._transact(op, write=True)

    async def resolve_uncertain(
        self, action: Action, applied: bool, result: bytes | None = None
    ) -> Resolution:
        act = _require_action(action)
        data = None if result is None else require_result(result)
        if not isinstance(applied, bool):
            raise InvalidArgumentError(f"sideeffect: applied must be a bool, got {applied!r}")

        def op(tx: Tx, now: float) -> Resolution:
            resolution, change = rules.resolve(tx.key(act.key), applied, data, now)
            tx.put(change)
            return resolution

        return await self._transact(op, write=True)

    async def lookup(self, key: str) -> Record | None:
        if not isinstance(key, str) or not key:
            raise InvalidArgumentError(f"sideeffect: key must be a non-empty string, got {key!r}")

        def op(tx: Tx, now: float) -> Record | None:
            row = tx.key(key)
            return None if row is None else rules.record_of(row, now)

        return await self._transact(op, write=False)

    async def pending(self, limit: int = 100) -> Backlog:
        """Keys that need reconciliation, ordered by key, at most `limit` of them."""
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise InvalidArgumentError(f"sideeffect: limit must be a positive int, got {limit!r}")

        def op(tx: Tx, now: float) -> Backlog:
            found = [
                rules.record_of(row, now)
                for row in tx.open_keys()
                if rules.needs_reconciliation(row, now)
            ]
            return Backlog(tuple(found[:limit]), truncated=len(found) > limit)

        return await self._transact(op, write=False)
