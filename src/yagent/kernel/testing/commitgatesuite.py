"""commitgate suite: the contract cases every `ClockedGate` implementation runs.

Guarantees: eight named cases, each a clause of the `Gate` contract, on a fresh gate from the
host's factory with the terminal vocabulary {"succeeded", "failed"} and an injected clock that
the cases move. A case fails by raising `ContractViolation`; nothing ever skips — a gate whose
clock cannot be injected is itself a violation (its expiry clauses could not be checked).
Use with pytest: `TestSqliteGate = suite(lambda d, t: SqliteGate(d / "g.db", t), name="Sqlite")`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio

from yagent.kernel.durable.clock import FakeClock as FakeClock
from yagent.kernel.durable.commitgate.store import ClockedGate
from yagent.kernel.durable.commitgate.types import (
    Acquired,
    CommitGateError,
    Holding,
    LeaseExpiredError,
    NotTerminalError,
    Outcome,
    TokenError,
)
from yagent.kernel.testing import contractsuite
from yagent.kernel.testing.contractsuite import Case as Case
from yagent.kernel.testing.contractsuite import ContractViolation as ContractViolation
from yagent.kernel.testing.contractsuite import expect as expect

TERMINAL = frozenset({"succeeded", "failed"})
TTL = 10.0
GateFactory = Callable[[Path, frozenset[str]], ClockedGate]


async def refused(what: str, call: Awaitable[Any], kind: type[Exception] = TokenError) -> None:
    try:
        await call
    except kind:
        return
    raise ContractViolation(f"{what} was accepted; the contract refuses it ({kind.__name__})")


async def grant(gate: ClockedGate, holder: str, step: str = "s1") -> Holding:
    got = await gate.acquire("r1", step, holder, TTL)
    holding = got.holding
    if got.outcome is not Outcome.GRANTED or holding is None:
        raise ContractViolation(f"acquire by {holder} should be GRANTED, got {got}")
    return holding


async def acquire(gate: ClockedGate, holder: str, want: Outcome, step: str = "s1") -> Acquired:
    got = await gate.acquire("r1", step, holder, TTL)
    expect(got.outcome is want, f"acquire by {holder} gave {got.outcome}, want {want}")
    return got


async def commit_once(gate: ClockedGate, clock: FakeClock) -> None:
    held = await grant(gate, "A")
    done = await gate.commit(held.token, "succeeded", "ok")
    expect((done.state, done.holder, done.detail) == ("succeeded", "A", "ok"), f"commit {done}")
    again = await acquire(gate, "B", Outcome.COMMITTED)
    expect(again.commit == done, f"a committed step must report its commit, got {again.commit}")
    await refused("a second commit with the same token", gate.commit(held.token, "failed"))
    clock.advance(100 * TTL)
    await acquire(gate, "C", Outcome.COMMITTED)
    expect(await gate.committed("r1", "s1") == done, "the first commit must stay")


async def two_branches_one_winner(gate: ClockedGate, clock: FakeClock) -> None:
    wins: list[str] = []

    async def branch(i: int) -> None:
        got = await gate.acquire("r1", "s1", f"b{i}", TTL)
        if got.holding is None:
            return
        try:
            await gate.commit(got.holding.token, "succeeded", f"b{i}")
        except TokenError:
            return
        wins.append(f"b{i}")

    async with anyio.create_task_group() as tg:
        for i in range(16):
            tg.start_soon(branch, i)
    expect(len(wins) == 1, f"exactly one branch may commit, got {wins}")
    done = await gate.committed("r1", "s1")
    expect(done is not None and done.detail == wins[0], f"stored commit {done} is not the winner")


async def tokens_are_unique(gate: ClockedGate, clock: FakeClock) -> None:
    tokens = []
    for step in ("s1", "s2"):
        for _ in range(3):
            held = await grant(gate, "same-holder", step)
            tokens.append(held.token)
            expect(await gate.release_lease(held.token), "releasing a live holding must succeed")
    expect(len(set(tokens)) == len(tokens) and all(tokens), f"tokens repeat: {tokens}")


async def late_release_cannot_free_another(gate: ClockedGate, clock: FakeClock) -> None:
    old = await grant(gate, "A")
    clock.advance(TTL + 1)
    new = await grant(gate, "B")
    expect(not await gate.release_lease(old.token), "a late release reported freeing something")
    await acquire(gate, "C", Outcome.HELD)
    # The same holder name at the same point twice: only the token tells the holdings apart.
    expect(await gate.release_lease(new.token), "B's own release must succeed")
    first = await grant(gate, "X")
    expect(await gate.release_lease(first.token), "X's first release must succeed")
    second = await grant(gate, "X")
    expect(not await gate.release_lease(first.token), "X's stale token freed the new holding")
    got = await acquire(gate, "C", Outcome.HELD)
    expect(got.held_by == "X", f"the gate must still be X's, got {got.held_by}")
    await gate.commit(second.token, "failed")


async def commit_needs_current_live_token(gate: ClockedGate, clock: FakeClock) -> None:
    held = await grant(gate, "A")
    await refused("a forged token", gate.commit("forged-" + held.token, "succeeded"))
    clock.advance(TTL)
    await refused("an expired token", gate.commit(held.token, "succeeded"), LeaseExpiredError)
    other = await grant(gate, "B")
    await refused("a token taken over", gate.commit(held.token, "succeeded"))
    expect(await gate.release_lease(other.token), "B's release must succeed")
    await refused("a released token", gate.commit(other.token, "succeeded"))
    expect(await gate.committed("r1", "s1") is None, "a refused commit was recorded")


async def vocabulary_is_enforced(gate: ClockedGate, clock: FakeClock) -> None:
    expect(gate.terminal == TERMINAL, f"the gate lost the injected vocabulary: {gate.terminal}")
    held = await grant(gate, "A")
    await refused("a non-terminal state", gate.commit(held.token, "running"), NotTerminalError)
    await acquire(gate, "B", Outcome.HELD)
    done = await gate.commit(held.token, "failed")
    expect(done.state == "failed", f"commit of a terminal state gave {done}")


async def held_until_expiry(gate: ClockedGate, clock: FakeClock) -> None:
    held = await grant(gate, "A")
    clock.advance(TTL - 1)
    got = await acquire(gate, "B", Outcome.HELD)
    expect(
        (got.held_by, got.held_until) == ("A", held.expires_at),
        f"HELD must name the holder and its expiry, got {got}",
    )
    await acquire(gate, "B", Outcome.GRANTED, step="s2")  # other steps are other gates
    clock.advance(1)
    await grant(gate, "B")


async def renew_extends_and_keeps_token(gate: ClockedGate, clock: FakeClock) -> None:
    held = await grant(gate, "A")
    clock.advance(TTL - 1)
    renewed = await gate.renew(held.token, TTL)
    expect(renewed.token == held.token, "renew must keep the token")
    expect(renewed.expires_at == clock.now() + TTL, f"renew must extend, got {renewed}")
    clock.advance(TTL - 1)
    await acquire(gate, "B", Outcome.HELD)
    expect(await gate.release_lease(held.token), "release after renew must succeed")
    await refused("renew after release", gate.renew(held.token, TTL))
    taken = await grant(gate, "B")
    clock.advance(TTL)
    await refused("renew after expiry", gate.renew(taken.token, TTL), LeaseExpiredError)
    await grant(gate, "C")
    await refused("renew after hand-over", gate.renew(taken.token, TTL))


CASES: tuple[Case, ...] = tuple(
    Case(fn.__name__, fn)
    for fn in (
        commit_once,
        two_branches_one_winner,
        tokens_are_unique,
        late_release_cannot_free_another,
        commit_needs_current_live_token,
        vocabulary_is_enforced,
        held_until_expiry,
        renew_extends_and_keeps_token,
    )
)


def _start(gate: ClockedGate) -> tuple[ClockedGate, FakeClock]:
    if not isinstance(gate, ClockedGate):
        raise ContractViolation(f"{type(gate).__name__} is not a ClockedGate")
    clock = FakeClock()
    gate.set_clock(clock)
    return gate, clock


def run_case(case: Case | str, factory: GateFactory, scratch: Path | None = None) -> None:
    """Run one case on a fresh gate; `ContractViolation` naming the case on failure."""
    chosen = contractsuite.named("commitgate suite", case, CASES)
    fresh = lambda where: factory(where, TERMINAL)  # noqa: E731 - the factory with the vocabulary
    contractsuite.run_case("commitgate suite", chosen, fresh, scratch, _start, CommitGateError)


def suite(factory: GateFactory, *, name: str = "CommitGateContract") -> type:
    """A pytest-collectable class with one `test_<case>` per case (assign it to a `Test…` name)."""
    return contractsuite.pytest_class(
        name,
        f"The commitgate suite on {name}.",
        CASES,
        lambda case, tmp: run_case(case, factory, tmp),
    )
