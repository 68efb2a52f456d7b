"""sidetest, uncertain family: the five clauses of "outcome unknown" (spec v0.32.0).

uncertain forbids re-execution / resolved-not-applied allows retry / resolved-applied records the
result / first resolution wins / a stale fence cannot mark uncertain.
"""

from __future__ import annotations

from yagent.kernel.durable.sideeffect import ClockedStore, Outcome, State
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

FAMILY = "uncertain"


async def uncertain_forbids_reexecution(store: ClockedStore, clock: FakeClock) -> None:
    act = action("k1")
    lease = await grant(store, act, "A")
    await store.mark_uncertain(lease, "timed out after sending")
    await outcome(store, act, "B", Outcome.UNCERTAIN, "an uncertain key")
    clock.advance(100 * TTL)
    got = await outcome(store, act, "C", Outcome.UNCERTAIN, "an uncertain key, long after")
    expect(bool(got.reason), "UNCERTAIN must carry the reason it was marked with")
    record = await store.lookup("k1")
    expect(
        record is not None and record.state is State.UNCERTAIN and record.needs_reconciliation,
        f"an uncertain key must show as needing reconciliation, got {record}",
    )
    backlog = await store.pending()
    expect(
        [r.key for r in backlog.records] == ["k1"] and not backlog.truncated,
        f"pending must list exactly the uncertain key, got {backlog}",
    )


async def resolved_not_applied_allows_retry(store: ClockedStore, clock: FakeClock) -> None:
    act = action("k1")
    lease = await grant(store, act, "A")
    await store.mark_uncertain(lease, "connection lost")
    resolution = await store.resolve_uncertain(act, applied=False)
    expect(resolution.resolved, f"the first resolution must be accepted: {resolution}")
    again = await grant(store, act, "B")
    expect(again.fence > lease.fence, "the retry needs a new fence")
    backlog = await store.pending()
    expect(not backlog.records, f"a resolved key is no longer pending: {backlog}")


async def resolved_applied_records_result(store: ClockedStore, clock: FakeClock) -> None:
    act = action("k1")
    lease = await grant(store, act, "A")
    await store.mark_uncertain(lease, "timeout")
    resolution = await store.resolve_uncertain(act, applied=True, result=b"remote")
    expect(resolution.resolved, f"the first resolution must be accepted: {resolution}")
    got = await outcome(store, act, "B", Outcome.ALREADY_DONE, "resolved as applied")
    expect(got.result == b"remote", f"the resolution's result must be recorded, got {got.result!r}")
    record = await store.lookup("k1")
    expect(
        record is not None and record.state is State.COMPLETED and not record.needs_reconciliation,
        f"resolved-applied must read as completed, got {record}",
    )


async def first_resolution_wins(store: ClockedStore, clock: FakeClock) -> None:
    one = action("k1")
    await store.mark_uncertain(await grant(store, one, "A"), "timeout")
    await store.resolve_uncertain(one, applied=True, result=b"first")
    late = await store.resolve_uncertain(one, applied=False)
    expect(not late.resolved, f"a second resolution must not be accepted: {late}")
    got = await outcome(store, one, "B", Outcome.ALREADY_DONE, "the first resolution said applied")
    expect(got.result == b"first", f"the first resolution's result must stay, got {got.result!r}")
    two = action("k2", "r2")
    await store.mark_uncertain(await grant(store, two, "A"), "timeout")
    await store.resolve_uncertain(two, applied=False)
    late = await store.resolve_uncertain(two, applied=True, result=b"late")
    expect(not late.resolved, f"a second resolution must not be accepted: {late}")
    await grant(store, two, "B")  # not ALREADY_DONE: the first resolution said "not applied"


async def stale_fence_cannot_mark_uncertain(store: ClockedStore, clock: FakeClock) -> None:
    act = safe("k1")
    old = await grant(store, act, "A")
    clock.advance(TTL + 1)
    new = await grant(store, act, "B")
    await refused("mark_uncertain with a superseded fence", store.mark_uncertain(old, "late"))
    record = await store.lookup("k1")
    expect(
        record is not None and record.state is State.IN_FLIGHT and record.fence == new.fence,
        f"the current attempt must be untouched, got {record}",
    )
    await store.complete(new, b"b")
    plain = action("k2", "r2")
    first = await grant(store, plain, "A")
    await store.abandon(first, "not sent")
    await grant(store, plain, "B")
    await refused("mark_uncertain by an abandoned attempt", store.mark_uncertain(first, "late"))


CASES = tuple(
    Case(fn.__name__, fn, FAMILY)
    for fn in (
        uncertain_forbids_reexecution,
        resolved_not_applied_allows_retry,
        resolved_applied_records_result,
        first_resolution_wins,
        stale_fence_cannot_mark_uncertain,
    )
)
