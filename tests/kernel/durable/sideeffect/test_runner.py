"""execute_with / Runner: every path of acquire → prepare → check → apply → record."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from yagent.kernel.durable.sideeffect import (
    Action,
    Lease,
    MemorySink,
    MemoryStore,
    Outcome,
    RetrySafety,
    Runner,
    SqliteStore,
    State,
    StoreError,
    default_holder,
    execute_with,
)
from yagent.kernel.judge import toolfail
from yagent.kernel.testing import sidetest

TTL = 10.0


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[MemoryStore | SqliteStore]:
    if request.param == "memory":
        yield MemoryStore()
        return
    with SqliteStore(tmp_path / "s.db") as made:
        yield made


@pytest.fixture
def clock(store: MemoryStore | SqliteStore) -> sidetest.FakeClock:
    fake = sidetest.FakeClock()
    store.set_clock(fake)
    return fake


class Effect:
    """An apply that writes through a fenced sink and counts its calls."""

    def __init__(self, sink: MemorySink[str] | None = None, fail: BaseException | None = None):
        self.sink = sink if sink is not None else MemorySink[str]()
        self.fail = fail
        self.calls = 0

    async def __call__(self, lease: Lease) -> bytes:
        self.calls += 1
        if self.fail is not None:
            raise self.fail
        await self.sink.write(lease, lease.key)
        return f"done:{lease.key}".encode()


ACT = Action("k1", "res")


async def _state(store: MemoryStore | SqliteStore, key: str = "k1") -> State | None:
    record = await store.lookup(key)
    return None if record is None else record.state


@pytest.mark.anyio
async def test_applies_once_then_reports_already_done(store: MemoryStore | SqliteStore) -> None:
    effect = Effect()
    first = await execute_with(store, ACT, None, effect, holder="A", ttl=TTL)
    assert first.outcome is Outcome.APPLIED
    assert first.result == b"done:k1"
    assert first.lease is not None
    assert not first.needs_reconciliation
    second = await execute_with(store, ACT, None, effect, holder="B", ttl=TTL)
    assert (second.outcome, second.result, effect.calls) == (Outcome.ALREADY_DONE, b"done:k1", 1)
    assert [e.key for e in effect.sink.entries()] == ["k1"]


@pytest.mark.anyio
async def test_contended_does_not_run(store: MemoryStore | SqliteStore, clock: object) -> None:
    await store.acquire(Action("other", "res"), "A", TTL)
    effect = Effect()
    got = await execute_with(store, ACT, None, effect, holder="B", ttl=TTL)
    assert got.outcome is Outcome.CONTENDED
    assert effect.calls == 0
    assert got.reason


@pytest.mark.anyio
async def test_prepare_runs_before_apply_with_the_lease(store: MemoryStore | SqliteStore) -> None:
    order: list[str] = []

    async def prepare(lease: Lease) -> None:
        order.append(f"prepare:{lease.fence}")

    async def apply(lease: Lease) -> bytes:
        order.append(f"apply:{lease.fence}")
        return b""

    got = await execute_with(store, ACT, prepare, apply)
    assert got.outcome is Outcome.APPLIED
    assert order == ["prepare:1", "apply:1"]


@pytest.mark.anyio
async def test_failed_prepare_applies_nothing_and_withdraws(
    store: MemoryStore | SqliteStore,
) -> None:
    async def prepare(lease: Lease) -> None:
        raise toolfail.ToolFailure(toolfail.Kind.INVALID_ARGS, "bad payload")

    effect = Effect()
    got = await execute_with(store, ACT, prepare, effect)
    assert (got.outcome, got.kind, effect.calls) == (Outcome.FAILED, toolfail.Kind.INVALID_ARGS, 0)
    assert await _state(store) is State.WITHDRAWN
    assert (await execute_with(store, ACT, None, effect)).outcome is Outcome.APPLIED


@pytest.mark.anyio
async def test_lease_lost_during_prepare_never_applies(
    store: MemoryStore | SqliteStore, clock: sidetest.FakeClock
) -> None:
    async def slow_prepare(lease: Lease) -> None:
        clock.advance(TTL + 1)
        await store.acquire(Action("other", "res"), "B", TTL)  # takes the gate over

    effect = Effect()
    got = await execute_with(store, ACT, slow_prepare, effect, holder="A", ttl=TTL)
    assert (got.outcome, effect.calls) == (Outcome.LEASE_LOST, 0)
    assert "bookkeeping failed" not in got.reason  # our own intent could still be withdrawn
    assert await _state(store) is State.WITHDRAWN


@pytest.mark.anyio
async def test_lease_lost_to_a_retry_safe_regrant_says_the_abandon_was_refused(
    store: MemoryStore | SqliteStore, clock: sidetest.FakeClock
) -> None:
    act = Action("k1", "res", RetrySafety.SAFE)

    async def slow_prepare(lease: Lease) -> None:
        clock.advance(TTL + 1)
        assert (await store.acquire(act, "B", TTL)).granted

    got = await execute_with(store, act, slow_prepare, Effect(), holder="A", ttl=TTL)
    assert got.outcome is Outcome.LEASE_LOST
    assert "bookkeeping failed (StaleLeaseError" in got.reason
    assert await _state(store) is State.IN_FLIGHT  # B's attempt is untouched


@pytest.mark.parametrize(
    ("error", "outcome", "state"),
    [
        (toolfail.ToolFailure(toolfail.Kind.RATE_LIMITED, "429"), Outcome.FAILED, State.WITHDRAWN),
        (toolfail.ToolFailure(toolfail.Kind.INVALID_ARGS, "no"), Outcome.FAILED, State.WITHDRAWN),
        (TimeoutError("read timed out"), Outcome.UNCERTAIN, State.UNCERTAIN),
        (ConnectionResetError("reset"), Outcome.UNCERTAIN, State.UNCERTAIN),
        (RuntimeError("who knows"), Outcome.UNCERTAIN, State.UNCERTAIN),
    ],
)
@pytest.mark.anyio
async def test_failed_apply_is_judged_by_resend_safety(
    store: MemoryStore | SqliteStore, error: Exception, outcome: Outcome, state: State
) -> None:
    got = await execute_with(store, ACT, None, Effect(fail=error))
    assert got.outcome is outcome
    assert got.error is error
    assert got.kind is toolfail.classify(error)
    assert await _state(store) is state
    again = await execute_with(store, ACT, None, Effect())
    if outcome is Outcome.UNCERTAIN:
        assert got.needs_reconciliation
        assert again.outcome is Outcome.UNCERTAIN  # the key refuses to run until resolved
        await store.resolve_uncertain(ACT, applied=False)
        again = await execute_with(store, ACT, None, Effect())
    assert again.outcome is Outcome.APPLIED


@pytest.mark.anyio
async def test_retry_safe_action_stays_executable_after_an_ambiguous_failure(
    store: MemoryStore | SqliteStore,
) -> None:
    act = Action("k1", "res", RetrySafety.SAFE)
    got = await execute_with(store, act, None, Effect(fail=TimeoutError()))
    assert got.outcome is Outcome.FAILED
    assert "retry-safe" in got.reason
    assert (await execute_with(store, act, None, Effect())).outcome is Outcome.APPLIED


@pytest.mark.anyio
async def test_cancelled_apply_turns_uncertain_and_propagates(
    store: MemoryStore | SqliteStore,
) -> None:
    started = anyio.Event()

    async def hang(lease: Lease) -> bytes:
        started.set()
        await anyio.sleep_forever()
        return b""  # pragma: no cover

    async with anyio.create_task_group() as tg:
        tg.start_soon(execute_with, store, ACT, None, hang)
        await started.wait()
        tg.cancel_scope.cancel()
    assert await _state(store) is State.UNCERTAIN


@pytest.mark.anyio
async def test_cancelled_prepare_withdraws_and_propagates(store: MemoryStore | SqliteStore) -> None:
    started = anyio.Event()

    async def hang(lease: Lease) -> None:
        started.set()
        await anyio.sleep_forever()

    effect = Effect()
    async with anyio.create_task_group() as tg:
        tg.start_soon(execute_with, store, ACT, hang, effect)
        await started.wait()
        tg.cancel_scope.cancel()
    assert effect.calls == 0
    assert await _state(store) is State.WITHDRAWN


@pytest.mark.anyio
async def test_slow_apply_that_lost_its_gate_is_unrecorded_and_uncertain(
    store: MemoryStore | SqliteStore, clock: sidetest.FakeClock
) -> None:
    async def slow(lease: Lease) -> bytes:
        clock.advance(TTL + 1)
        return b"it happened"

    got = await execute_with(store, ACT, None, slow, ttl=TTL)
    assert (got.outcome, got.result) == (Outcome.UNRECORDED, b"it happened")
    assert got.needs_reconciliation
    record = await store.lookup("k1")
    assert record is not None
    assert record.state is State.UNCERTAIN
    assert "applied, but the store did not record it" in record.reason


@pytest.mark.anyio
async def test_slow_retry_safe_apply_stays_executable_and_a_retry_records_it(
    store: MemoryStore | SqliteStore, clock: sidetest.FakeClock
) -> None:
    act = Action("k1", "res", RetrySafety.SAFE)

    async def slow(lease: Lease) -> bytes:
        clock.advance(TTL + 1)
        return b"deduplicated downstream"

    got = await execute_with(store, act, None, slow, ttl=TTL)
    assert got.outcome is Outcome.UNRECORDED
    assert not got.needs_reconciliation
    assert "retry-safe" in got.reason
    assert await _state(store) is State.WITHDRAWN
    assert (await execute_with(store, act, None, Effect())).outcome is Outcome.APPLIED


@pytest.mark.anyio
async def test_acquire_outcomes_say_whether_reconciliation_is_needed(
    store: MemoryStore | SqliteStore,
) -> None:
    grant = await store.acquire(ACT, "A", TTL)
    assert grant.lease is not None
    assert not (await execute_with(store, ACT, None, Effect())).needs_reconciliation  # contended
    await store.mark_uncertain(grant.lease, "timeout")
    blocked = await execute_with(store, ACT, None, Effect())
    assert (blocked.outcome, blocked.needs_reconciliation) == (Outcome.UNCERTAIN, True)
    assert blocked.reason == "timeout"


@pytest.mark.anyio
async def test_non_bytes_result_is_unrecorded(store: MemoryStore | SqliteStore) -> None:
    async def wrong(lease: Lease) -> bytes:
        return "text"  # type: ignore[return-value]

    got = await execute_with(store, ACT, None, wrong)
    assert (got.outcome, got.needs_reconciliation) == (Outcome.UNRECORDED, True)
    assert "not bytes" in got.reason
    assert await _state(store) is State.UNCERTAIN


class FlakyStore(MemoryStore):
    """Fails chosen bookkeeping operations as a backend would."""

    def __init__(self, *failing: str) -> None:
        super().__init__()
        self.failing = set(failing)

    async def complete(self, lease: Lease, result: bytes) -> None:
        if "complete" in self.failing:
            raise StoreError("disk full")
        await super().complete(lease, result)

    async def mark_uncertain(self, lease: Lease, reason: str) -> None:
        if "mark_uncertain" in self.failing:
            raise StoreError("disk full")
        await super().mark_uncertain(lease, reason)


@pytest.mark.anyio
async def test_store_failure_after_apply_is_unrecorded_and_said() -> None:
    store = FlakyStore("complete")
    got = await execute_with(store, ACT, None, Effect())
    assert (got.outcome, got.result) == (Outcome.UNRECORDED, b"done:k1")
    assert isinstance(got.error, StoreError)
    assert await _state(store) is State.UNCERTAIN  # the mark still went through


@pytest.mark.anyio
async def test_failed_bookkeeping_is_said_and_the_intent_stays() -> None:
    store = FlakyStore("complete", "mark_uncertain")
    clock = sidetest.FakeClock()
    store.set_clock(clock)
    got = await execute_with(store, ACT, None, Effect(), ttl=TTL)
    assert got.outcome is Outcome.UNRECORDED
    assert "bookkeeping failed (StoreError: disk full)" in got.reason
    clock.advance(TTL + 1)
    record = await store.lookup("k1")
    assert record is not None
    assert record.needs_reconciliation  # the intent left a trace anyway


@pytest.mark.anyio
async def test_runner_binds_store_holder_ttl_and_classifier() -> None:
    store = MemoryStore(clock=sidetest.FakeClock(100.0))
    runner = Runner(store, holder="me", ttl=5.0, classify=lambda exc: toolfail.Kind.RATE_LIMITED)
    got = await runner.execute(ACT, Effect(fail=RuntimeError("refused upstream")))
    assert (got.outcome, got.kind) == (Outcome.FAILED, toolfail.Kind.RATE_LIMITED)
    ok = await runner.execute(Action("k2", "res"), Effect())
    assert ok.lease is not None
    assert (ok.lease.holder, ok.lease.expires_at) == ("me", 105.0)


def test_default_holder_is_unique_and_names_the_process() -> None:
    a, b = default_holder(), default_holder()
    assert a != b
    assert f":{os.getpid()}:" in a
