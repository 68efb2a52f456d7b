"""sidetest, intent family: the six clauses of the execution intent (spec v0.33.0).

an unresolved intent is not re-granted / expired and unresolved ⇒ needs reconciliation / declared
retry-safe ⇒ re-granted after expiry / abandon makes it executable again / release does not
withdraw the intent / abandon accepts only this attempt's token.
"""

from __future__ import annotations

from yagent.kernel.durable.sideeffect import ClockedStore, Lease, Outcome, State
from yagent.kernel.testing.sidetest.harness import (
    TTL,
    Case,
    FakeClock,
    action,
    expect,
    grant,
    outcome,
    refused,
    safe,
)

FAMILY = "intent"


async def unresolved_intent_not_regranted(store: ClockedStore, clock: FakeClock) -> None:
    act = action("k1", "r1")
    await grant(store, act, "A")
    await outcome(store, act, "B", Outcome.CONTENDED, "a live intent")
    moved = action("k1", "r2")  # the key decides, whatever resource a retry names
    got = await store.acquire(moved, "B", TTL)
    expect(not got.granted, f"a live intent was granted again through another resource: {got}")
    clock.advance(TTL + 1)
    for holder in ("B", "C"):
        got = await store.acquire(act, holder, TTL)
        expect(not got.granted, f"an expired, unresolved intent was granted again to {holder}")


async def expired_unresolved_needs_reconciliation(store: ClockedStore, clock: FakeClock) -> None:
    act = action("k1")
    await grant(store, act, "A")
    clock.advance(TTL + 1)
    record = await store.lookup("k1")  # visible before anyone tries the key again
    expect(
        record is not None and record.needs_reconciliation,
        f"an expired unresolved intent must read as needing reconciliation, got {record}",
    )
    backlog = await store.pending()
    expect([r.key for r in backlog.records] == ["k1"], f"pending must list it, got {backlog}")
    got = await outcome(store, act, "B", Outcome.UNCERTAIN, "expired and unresolved")
    expect(bool(got.reason), "needs-reconciliation must say why")
    clock.advance(100 * TTL)
    await outcome(store, act, "C", Outcome.UNCERTAIN, "still unresolved, long after")
    resolution = await store.resolve_uncertain(act, applied=False)
    expect(resolution.resolved, f"reconciliation must be able to settle it: {resolution}")
    await grant(store, act, "D")


async def safe_regranted_after_expiry(store: ClockedStore, clock: FakeClock) -> None:
    act = safe("k1")
    old = await grant(store, act, "A")
    await outcome(store, act, "B", Outcome.CONTENDED, "a live retry-safe intent")
    clock.advance(TTL + 1)
    record = await store.lookup("k1")
    expect(
        record is not None and not record.needs_reconciliation,
        f"an expired retry-safe intent needs no reconciliation, got {record}",
    )
    new = await grant(store, act, "B")
    expect(new.fence > old.fence, f"the re-grant needs a newer fence ({old.fence} → {new.fence})")
    await store.complete(new, b"ok")


async def abandon_makes_executable_again(store: ClockedStore, clock: FakeClock) -> None:
    act = action("k1")
    lease = await grant(store, act, "A")
    await store.abandon(lease, "refused before sending")
    record = await store.lookup("k1")
    expect(
        record is not None
        and record.state is not State.COMPLETED
        and not record.needs_reconciliation,
        f"an abandoned intent is neither done nor pending reconciliation, got {record}",
    )
    again = await grant(store, act, "B")  # at once: no need to wait for the old lease to expire
    expect(again.fence > lease.fence, "the new attempt needs a newer fence")


async def release_does_not_withdraw_intent(store: ClockedStore, clock: FakeClock) -> None:
    act = action("k1", "res")
    lease = await grant(store, act, "A")
    await store.release(lease)
    got = await store.acquire(act, "B", TTL)
    expect(not got.granted, f"release withdrew the intent: the key was granted again ({got})")
    await grant(store, action("k2", "res"), "C")  # the gate itself is free
    clock.advance(TTL + 1)
    await outcome(store, act, "D", Outcome.UNCERTAIN, "released without an outcome")
    record = await store.lookup("k1")
    expect(
        record is not None and record.needs_reconciliation, f"must need reconciliation: {record}"
    )


async def abandon_only_this_attempt(store: ClockedStore, clock: FakeClock) -> None:
    act = safe("k1")
    old = await grant(store, act, "A")
    clock.advance(TTL + 1)
    new = await grant(store, act, "B")
    await refused("abandon with a superseded fence", store.abandon(old, "late"))
    forged = Lease(new.key, new.resource, new.fence + 1, new.holder, new.expires_at)
    await refused("abandon with a fence never issued", store.abandon(forged, "forged"))
    await outcome(store, act, "C", Outcome.CONTENDED, "the current attempt must still hold it")
    await store.abandon(new, "refused before sending")
    await grant(store, act, "C")


CASES = tuple(
    Case(fn.__name__, fn, FAMILY)
    for fn in (
        unresolved_intent_not_regranted,
        expired_unresolved_needs_reconciliation,
        safe_regranted_after_expiry,
        abandon_makes_executable_again,
        release_does_not_withdraw_intent,
        abandon_only_this_attempt,
    )
)
