"""sidetest harness: the fake clock, the assertions and the ways a host runs the cases.

Contract: a case fails by raising `ContractViolation` (an `AssertionError` that survives `python
-O`: no bare `assert`); nothing here ever skips. A store that does not implement `ClockedStore` is
itself a violation — without an injected clock no expiry case could trigger and the suite would be
a set of empty assertions. Each case gets a fresh store from the host's factory, given a scratch
directory of its own; the store is closed afterwards when it has a `close()`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from yagent.kernel.durable.clock import FakeClock as FakeClock
from yagent.kernel.durable.sideeffect import (
    Action,
    ClockedStore,
    Grant,
    Lease,
    LeaseError,
    Outcome,
    RetrySafety,
)
from yagent.kernel.testing import contractsuite
from yagent.kernel.testing.contractsuite import Case as Case
from yagent.kernel.testing.contractsuite import ContractViolation as ContractViolation
from yagent.kernel.testing.contractsuite import expect as expect

TTL = 10.0
START = 1_000_000.0

StoreFactory = Callable[[Path], ClockedStore]
"""Gives a fresh, empty store; the path is a scratch directory owned by this one case."""


CaseFn = Callable[[ClockedStore, FakeClock], Awaitable[None]]


def action(key: str, resource: str = "res", safety: RetrySafety = RetrySafety.UNDECLARED) -> Action:
    return Action(key, resource, safety)


def safe(key: str, resource: str = "res") -> Action:
    return Action(key, resource, RetrySafety.SAFE)


async def grant(store: ClockedStore, act: Action, holder: str, ttl: float = TTL) -> Lease:
    """Acquire and insist on a grant."""
    got = await store.acquire(act, holder, ttl)
    lease = got.lease
    if got.outcome is not Outcome.GRANTED or lease is None:
        raise ContractViolation(
            f"acquire of {act.key!r} by {holder} should be GRANTED, got {got.outcome} "
            f"({got.reason})"
        )
    expect(
        (lease.key, lease.resource, lease.holder) == (act.key, act.resource, holder),
        f"granted lease {lease} does not name the action and holder",
    )
    return lease


async def outcome(store: ClockedStore, act: Action, holder: str, want: Outcome, why: str) -> Grant:
    """Acquire and insist on a given outcome."""
    got = await store.acquire(act, holder, TTL)
    expect(got.outcome is want, f"{why}: acquire of {act.key!r} gave {got.outcome}, want {want}")
    expect(
        (got.lease is not None) == (want is Outcome.GRANTED),
        f"acquire gave {got.outcome} with lease {got.lease}: only a grant carries a lease",
    )
    return got


async def refused(what: str, call: Awaitable[Any]) -> None:
    """Insist that a store operation is refused with a `LeaseError`."""
    try:
        await call
    except LeaseError:
        return
    raise ContractViolation(f"{what} was accepted; the contract refuses it")


def _start(store: ClockedStore) -> tuple[ClockedStore, FakeClock]:
    if not isinstance(store, ClockedStore):
        raise ContractViolation(
            f"{type(store).__name__} is not a ClockedStore: without an injected clock the "
            f"expiry clauses cannot be checked"
        )
    clock = FakeClock()
    store.set_clock(clock)
    return store, clock


def run_case(
    case: Case | str, factory: StoreFactory, scratch: Path | None = None, *, cases: Sequence[Case]
) -> None:
    """Run one case on a fresh store; raises `ContractViolation` naming the case on failure."""
    chosen = contractsuite.named("sidetest", case, cases)
    contractsuite.run_case("sidetest", chosen, factory, scratch, _start)


def run_all(factory: StoreFactory, *, cases: Sequence[Case]) -> None:
    """Run every case (all of them, not up to the first failure); one violation lists them all."""
    contractsuite.run_all(lambda case: run_case(case, factory, cases=cases), cases)


def suite(factory: StoreFactory, *, cases: Sequence[Case], name: str) -> type:
    """A test class with one `test_<case>` method per case, for pytest to collect.

    Each method takes pytest's `tmp_path` fixture as the case's scratch directory. Assign the class
    to a module-level name starting with `Test`.
    """
    return contractsuite.pytest_class(
        name,
        f"The sideeffect contract suite on {name}.",
        cases,
        lambda case, tmp: run_case(case, factory, tmp, cases=cases),
    )
