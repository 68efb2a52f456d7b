"""Properties over random operation sequences.

1. Differential: the memory and SQLite stores answer every sequence identically (same outcomes,
   fences, results and refusals) — they share one judgement, so any drift is a storage bug.
2. Safety, checked against an independent model of what was granted and settled:
   - a completed key is never granted again;
   - an undeclared key is granted again only after its intent was withdrawn (abandon or
     resolve-not-applied) — never merely because its lease expired or was released;
   - fences per resource strictly increase, and no resource ever has two live leases.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from hypothesis import given, settings
from hypothesis import strategies as st

from yagent.kernel.durable.sideeffect import (
    Action,
    ClockedStore,
    Lease,
    LeaseError,
    MemoryStore,
    Outcome,
    RetrySafety,
    SqliteStore,
)
from yagent.kernel.testing import sidetest

KEYS = ("a", "b", "c")
RESOURCES = ("r1", "r2")

idx = st.integers(0, 7)
ops = st.one_of(
    st.tuples(
        st.just("acquire"), st.sampled_from(KEYS), st.sampled_from(RESOURCES), st.booleans(),
        st.sampled_from((5.0, 10.0)),
    ),
    st.tuples(st.just("renew"), idx, st.sampled_from((5.0, 10.0))),
    st.tuples(st.just("complete"), idx, st.binary(max_size=3)),
    st.tuples(st.just("release"), idx),
    st.tuples(st.just("abandon"), idx),
    st.tuples(st.just("mark"), idx),
    st.tuples(st.just("resolve"), st.sampled_from(KEYS), st.booleans()),
    st.tuples(st.just("advance"), st.sampled_from((1.0, 4.0, 11.0))),
    st.tuples(st.just("lookup"), st.sampled_from(KEYS)),
)  # fmt: skip


def _action(key: str, resource: str, safe: bool) -> Action:
    return Action(key, resource, RetrySafety.SAFE if safe else RetrySafety.UNDECLARED)


async def _play(store: ClockedStore, clock: sidetest.FakeClock, script: list[Any]) -> list[Any]:
    """Run the script; returns one observation per step (leases are addressed by grant order)."""
    leases: list[Lease] = []
    seen: list[Any] = []
    for op in script:
        name, *args = op
        if name in {"renew", "complete", "release", "abandon", "mark"} and not leases:
            seen.append("no lease")
            continue
        try:
            if name == "acquire":
                key, resource, safe, ttl = args
                got = await store.acquire(_action(key, resource, safe), "h", ttl)
                if got.lease is not None:
                    leases.append(got.lease)
                seen.append((got.outcome, got.lease, got.result, got.blocked_until))
            elif name == "advance":
                clock.advance(args[0])
                seen.append(clock.now())
            elif name == "resolve":
                res = await store.resolve_uncertain(_action(args[0], "r1", False), args[1], b"z")
                seen.append((res.resolved, res.record))
            elif name == "lookup":
                seen.append(await store.lookup(args[0]))
            else:
                lease = leases[args[0] % len(leases)]
                if name == "renew":
                    seen.append(await store.renew(lease, args[1]))
                elif name == "complete":
                    seen.append(await store.complete(lease, args[1]))
                elif name == "release":
                    seen.append(await store.release(lease))
                elif name == "abandon":
                    seen.append(await store.abandon(lease, "x"))
                else:
                    seen.append(await store.mark_uncertain(lease, "x"))
        except LeaseError as exc:
            seen.append(type(exc).__name__)
    return seen


@dataclass
class Model:
    """What the observed answers imply, judged independently of the store's own rules."""

    done: set[str] = field(default_factory=set)
    open_intent: dict[str, bool] = field(default_factory=dict)  # key -> declared safe
    last_fence: dict[str, int] = field(default_factory=dict)
    holder: dict[str, tuple[int, float]] = field(default_factory=dict)  # resource -> fence, expiry

    def granted(self, act: Action, lease: Lease, now: float) -> None:
        assert act.key not in self.done, f"completed key {act.key} granted again"
        if act.key in self.open_intent:
            safe = self.open_intent[act.key] and act.retry_safety is RetrySafety.SAFE
            assert safe, f"undeclared key {act.key} granted again without being withdrawn"
        assert lease.fence > self.last_fence.get(act.resource, 0), "fence did not increase"
        current = self.holder.get(act.resource)
        assert current is None or now >= current[1], f"two live leases on {act.resource}"
        self.last_fence[act.resource] = lease.fence
        self.holder[act.resource] = (lease.fence, lease.expires_at)
        self.open_intent[act.key] = act.retry_safety is RetrySafety.SAFE

    def ended(self, lease: Lease, *, done: bool = False, withdrawn: bool = False) -> None:
        if self.holder.get(lease.resource, (0, 0.0))[0] == lease.fence:
            del self.holder[lease.resource]
        if done:
            self.done.add(lease.key)
            self.open_intent.pop(lease.key, None)
        if withdrawn:
            self.open_intent.pop(lease.key, None)


def _check(script: list[Any], seen: list[Any]) -> None:
    model, leases, now = Model(), [], sidetest.harness.START
    for op, got in zip(script, seen, strict=True):
        name, *args = op
        if isinstance(got, str):  # refused, or no lease to address: nothing changed
            continue
        if name == "acquire" and got[0] is Outcome.GRANTED:
            model.granted(_action(args[0], args[1], args[2]), got[1], now)
            leases.append(got[1])
        elif name == "advance":
            now = got
        elif name == "renew":
            model.holder[got.resource] = (got.fence, got.expires_at)
        elif name in {"complete", "release", "abandon", "mark"}:
            lease = leases[args[0] % len(leases)]
            model.ended(lease, done=name == "complete", withdrawn=name == "abandon")
        elif name == "resolve" and got[0]:
            model.open_intent.pop(args[0])
            if args[1]:
                model.done.add(args[0])


@settings(max_examples=100, deadline=None)
@given(script=st.lists(ops, max_size=40))
def test_memory_and_sqlite_agree_and_stay_safe(script: list[Any]) -> None:
    memory_clock, sqlite_clock = sidetest.FakeClock(), sidetest.FakeClock()
    memory = MemoryStore(clock=memory_clock)
    with (
        tempfile.TemporaryDirectory() as tmp,
        SqliteStore(Path(tmp) / "s.db", clock=sqlite_clock) as sqlite,
    ):
        from_sqlite = anyio.run(_play, sqlite, sqlite_clock, script)
    from_memory = anyio.run(_play, memory, memory_clock, script)
    assert from_memory == from_sqlite
    _check(script, from_memory)
