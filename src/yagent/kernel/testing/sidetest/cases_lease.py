"""sidetest, lease family: the eleven clauses of key, lease and fence (spec row `sidetest`).

only once / completed beats held / contention before expiry / takeover after expiry / tokens
monotonic / an expired holder cannot record / cannot release / release is not completion / renew
extends and keeps the token / renew refused after hand-over / renew refused after release.
"""

from __future__ import annotations

import itertools

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

FAMILY = "lease"


async def only_once(store: ClockedStore, clock: FakeClock) -> None:
    act = action("k1")
    lease = await grant(store, act, "A")
    await store.complete(lease, b"r1")
    for holder in ("A", "B"):
        got = await outcome(store, act, holder, Outcome.ALREADY_DONE, "a completed key")
        expect(
            got.result == b"r1", f"ALREADY_DONE must return the recorded result, got {got.result!r}"
        )
    clock.advance(100 * TTL)
    await outcome(store, act, "C", Outcome.ALREADY_DONE, "a completed key, long after")
    await refused("a second complete of a completed key", store.complete(lease, b"r2"))
    record = await store.lookup("k1")
    expect(
        record is not None and record.state is State.COMPLETED and record.result == b"r1",
        f"the first result stays recorded, got {record}",
    )


async def completed_beats_held(store: ClockedStore, clock: FakeClock) -> None:
    done = action("k1", "res")
    first = await grant(store, done, "A")
    await store.complete(first, b"done")
    await grant(store, action("k2", "res"), "B")  # the resource is now held by someone else
    got = await outcome(store, done, "C", Outcome.ALREADY_DONE, "completed beats a held resource")
    expect(got.result == b"done", f"wrong recorded result {got.result!r}")


async def contention_before_expiry(store: ClockedStore, clock: FakeClock) -> None:
    lease = await grant(store, action("k1", "res"), "A")
    clock.advance(TTL - 1)
    other = await outcome(store, action("k2", "res"), "B", Outcome.CONTENDED, "resource held")
    expect(
        other.blocked_until is not None and other.blocked_until >= clock.now(),
        f"CONTENDED must say until when the resource is held, got {other.blocked_until}",
    )
    await outcome(store, action("k1", "res"), "B", Outcome.CONTENDED, "key in flight")
    await store.complete(lease, b"ok")  # the holder is undisturbed by the contenders


async def takeover_after_expiry(store: ClockedStore, clock: FakeClock) -> None:
    old = await grant(store, action("k1", "res"), "A")
    clock.advance(TTL + 1)
    new = await grant(store, action("k2", "res"), "B")
    expect(new.fence > old.fence, f"takeover fence {new.fence} must exceed {old.fence}")


async def tokens_monotonic(store: ClockedStore, clock: FakeClock) -> None:
    fences = []
    lease = await grant(store, action("k1"), "A")
    fences.append(lease.fence)
    await store.complete(lease, b"")
    lease = await grant(store, action("k2"), "A")
    fences.append(lease.fence)
    await store.release(lease)
    lease = await grant(store, action("k3"), "A")
    fences.append(lease.fence)
    clock.advance(TTL + 1)
    lease = await grant(store, action("k4"), "B")
    fences.append(lease.fence)
    await store.abandon(lease, "not sent")
    lease = await grant(store, safe("k5"), "C")
    fences.append(lease.fence)
    clock.advance(TTL + 1)
    lease = await grant(store, safe("k5"), "D")  # a re-grant of the same key
    fences.append(lease.fence)
    await store.mark_uncertain(lease, "lost")
    fences.append((await grant(store, action("k6"), "E")).fence)
    expect(
        all(a < b for a, b in itertools.pairwise(fences)),
        f"fences on one resource must strictly increase, got {fences}",
    )


async def expired_holder_cannot_record(store: ClockedStore, clock: FakeClock) -> None:
    lease = await grant(store, action("k1", "r1"), "A")
    clock.advance(TTL + 1)
    await refused("complete by an expired holder", store.complete(lease, b"late"))
    record = await store.lookup("k1")
    expect(
        record is not None and record.state is not State.COMPLETED, f"late record kept: {record}"
    )
    # The same after a takeover: the new holder's result is the one recorded.
    old = await grant(store, safe("k2", "r2"), "A")
    clock.advance(TTL + 1)
    new = await grant(store, safe("k2", "r2"), "B")
    await refused("complete by a superseded holder", store.complete(old, b"stale"))
    await store.complete(new, b"fresh")
    got = await outcome(store, safe("k2", "r2"), "C", Outcome.ALREADY_DONE, "completed by B")
    expect(got.result == b"fresh", f"the superseded holder's result won: {got.result!r}")


async def expired_holder_cannot_release(store: ClockedStore, clock: FakeClock) -> None:
    old = await grant(store, action("k1", "res"), "A")
    clock.advance(TTL + 1)
    await grant(store, action("k2", "res"), "B")
    await refused("release by an expired, superseded holder", store.release(old))
    await outcome(store, action("k3", "res"), "C", Outcome.CONTENDED, "B must still hold the gate")
    lone = await grant(store, action("k4", "other"), "A")
    clock.advance(TTL + 1)
    await refused("release by an expired holder", store.release(lone))


async def release_is_not_completion(store: ClockedStore, clock: FakeClock) -> None:
    lease = await grant(store, safe("k1"), "A")
    await store.release(lease)
    clock.advance(TTL + 1)
    again = await grant(store, safe("k1"), "B")
    expect(again.fence > lease.fence, "a re-grant after release needs a new fence")
    record = await store.lookup("k1")
    expect(
        record is not None and record.state is not State.COMPLETED, f"release completed: {record}"
    )
    plain = await grant(store, action("k2", "r2"), "A")
    await store.release(plain)
    got = await store.acquire(action("k2", "r2"), "B", TTL)
    expect(got.outcome is not Outcome.ALREADY_DONE, "a released key was reported as done")


async def renew_extends_keeps_token(store: ClockedStore, clock: FakeClock) -> None:
    lease = await grant(store, action("k1", "res"), "A")
    clock.advance(TTL - 1)
    renewed = await store.renew(lease, TTL)
    expect(renewed.fence == lease.fence, f"renew changed the fence {lease.fence}→{renewed.fence}")
    expect(
        renewed.expires_at > lease.expires_at and renewed.key == lease.key,
        f"renew must extend the same lease: {lease} → {renewed}",
    )
    clock.advance(2)  # past the original expiry, within the renewed one
    await outcome(store, action("k2", "res"), "B", Outcome.CONTENDED, "renewed lease still holds")
    await store.complete(renewed, b"ok")


async def renew_refused_after_handover(store: ClockedStore, clock: FakeClock) -> None:
    old = await grant(store, action("k1", "res"), "A")
    clock.advance(TTL + 1)
    new = await grant(store, action("k2", "res"), "B")
    await refused("renew after the gate changed hands", store.renew(old, TTL))
    await store.complete(new, b"b")  # the new holder was not disturbed


async def renew_refused_after_release(store: ClockedStore, clock: FakeClock) -> None:
    lease = await grant(store, safe("k1", "res"), "A")
    await store.release(lease)
    # Nobody took the gate: the fence is still the newest, so a token-only check would pass.
    await refused("renew after release", store.renew(lease, TTL))
    await refused("complete after release", store.complete(lease, b"x"))


CASES = tuple(
    Case(fn.__name__, fn, FAMILY)
    for fn in (
        only_once,
        completed_beats_held,
        contention_before_expiry,
        takeover_after_expiry,
        tokens_monotonic,
        expired_holder_cannot_record,
        expired_holder_cannot_release,
        release_is_not_completion,
        renew_extends_keeps_token,
        renew_refused_after_handover,
        renew_refused_after_release,
    )
)
