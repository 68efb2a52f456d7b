"""complete_with_retries: retry what the toolfail table says, with its backoff."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import anyio
import pytest

from yagent.kernel.durable import retryplan
from yagent.kernel.judge import toolfail
from yagent.kernel.judge.toolfail import Kind
from yagent.llm.retry import MODEL_REQUEST_KEY, complete_with_retries
from yagent.llm.types import AssistantTurn, EngineError, Request, StreamEvent, TurnDone

REQ = Request(system="x", messages=())
OK = AssistantTurn(text="done")


@dataclass
class Flaky:
    """Fails with the given kinds in order, then answers."""

    failures: list[Kind]
    calls: int = 0
    model: str = "flaky"

    async def stream(self, request: Request) -> AsyncIterator[StreamEvent]:
        self.calls += 1
        if self.failures:
            raise EngineError(self.failures.pop(0), f"failure #{self.calls}")
        yield TurnDone(OK)


@dataclass
class FakeSleep:
    delays: list[float] = field(default_factory=list)

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)


@pytest.mark.anyio
async def test_retryable_failures_are_retried_with_the_tables_backoff() -> None:
    engine = Flaky([Kind.RATE_LIMITED, Kind.RATE_LIMITED, Kind.OVERLOADED])
    sleep = FakeSleep()
    seen: list[tuple[int, Kind, float]] = []
    turn = await complete_with_retries(
        engine,
        REQ,
        step_retries=3,
        sleep=sleep,
        on_retry=lambda n, err, d: seen.append((n, err.kind, d)),
    )
    assert turn is OK
    assert engine.calls == 4
    slow = toolfail.rule(Kind.RATE_LIMITED).backoff
    assert sleep.delays == [
        slow.delay(1),
        slow.delay(2),
        toolfail.rule(Kind.OVERLOADED).backoff.delay(3),
    ]
    assert sleep.delays == [2.0, 4.0, 8.0]
    assert [s[:2] for s in seen] == [
        (1, Kind.RATE_LIMITED),
        (2, Kind.RATE_LIMITED),
        (3, Kind.OVERLOADED),
    ]


@pytest.mark.anyio
@pytest.mark.parametrize("kind", [Kind.TIMEOUT, Kind.TRANSIENT])
async def test_timeouts_and_transient_errors_use_the_quick_backoff(kind: Kind) -> None:
    engine = Flaky([kind])
    sleep = FakeSleep()
    await complete_with_retries(engine, REQ, step_retries=1, sleep=sleep)
    assert sleep.delays == [toolfail.rule(kind).backoff.delay(1)] == [0.5]


@pytest.mark.anyio
@pytest.mark.parametrize(
    "kind", [Kind.UNAUTHORIZED, Kind.INVALID_ARGS, Kind.UNKNOWN, Kind.INTERNAL]
)
async def test_non_retryable_errors_raise_at_once(kind: Kind) -> None:
    engine = Flaky([kind])
    sleep = FakeSleep()
    with pytest.raises(EngineError) as info:
        await complete_with_retries(engine, REQ, step_retries=5, sleep=sleep)
    assert info.value.kind is kind
    assert str(info.value) == "failure #1"
    assert engine.calls == 1
    assert sleep.delays == []


@pytest.mark.anyio
@pytest.mark.parametrize("retries", [0, 1, 2])
async def test_the_retry_count_is_honoured(retries: int) -> None:
    engine = Flaky([Kind.OVERLOADED] * 10)
    sleep = FakeSleep()
    with pytest.raises(EngineError) as info:
        await complete_with_retries(engine, REQ, step_retries=retries, sleep=sleep)
    assert engine.calls == retries + 1
    assert len(sleep.delays) == retries
    assert info.value.kind is Kind.OVERLOADED
    if retries:
        assert f"gave up after {retries} retries" in str(info.value)
        assert isinstance(info.value.__cause__, EngineError)
    else:
        assert str(info.value) == "failure #1"


@pytest.mark.anyio
async def test_a_retry_that_hits_a_non_retryable_error_stops() -> None:
    engine = Flaky([Kind.TRANSIENT, Kind.UNAUTHORIZED, Kind.TRANSIENT])
    with pytest.raises(EngineError) as info:
        await complete_with_retries(engine, REQ, step_retries=5, sleep=FakeSleep())
    assert info.value.kind is Kind.UNAUTHORIZED
    assert engine.calls == 2


@pytest.mark.anyio
async def test_negative_retries_are_refused() -> None:
    with pytest.raises(ValueError, match="step_retries"):
        await complete_with_retries(Flaky([]), REQ, step_retries=-1, sleep=FakeSleep())


@pytest.mark.anyio
async def test_cancellation_during_backoff_is_not_retried() -> None:
    engine = Flaky([Kind.RATE_LIMITED] * 3)
    with anyio.CancelScope() as scope:

        async def cancel_on_sleep(delay: float) -> None:
            scope.cancel()
            await anyio.sleep(delay)

        await complete_with_retries(engine, REQ, step_retries=3, sleep=cancel_on_sleep)
    assert scope.cancelled_caught
    assert engine.calls == 1


@pytest.mark.anyio
async def test_default_sleep_is_anyio_sleep_for_zero_backoff_kinds() -> None:
    engine = Flaky([Kind.NOT_LOADED])  # retryable with no backoff
    assert await complete_with_retries(engine, REQ, step_retries=1) is OK
    assert engine.calls == 2


@pytest.mark.anyio
async def test_the_retry_decision_and_its_backoff_come_from_retryplan(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The loop follows `kernel.durable.retryplan`: what it plans is what happens (no second
    table)."""
    asked: list[tuple[Kind, str | None]] = []
    backoff = toolfail.Backoff(7.0, 1.0, 7.0)

    def explain(kind: Kind, *, idempotency_key: str | None) -> retryplan.Plan:
        asked.append((kind, idempotency_key))
        path = retryplan.Path.RESEND if kind is Kind.OVERLOADED else retryplan.Path.NO_RETRY
        return retryplan.Plan(path, "planned", kind, backoff, needs_human=False)

    monkeypatch.setattr(retryplan, "explain", explain)
    sleep = FakeSleep()
    engine = Flaky([Kind.OVERLOADED, Kind.RATE_LIMITED])  # the table would retry both
    with pytest.raises(EngineError) as raised:
        await complete_with_retries(engine, REQ, step_retries=5, sleep=sleep)
    assert raised.value.kind is Kind.RATE_LIMITED  # the plan said no: raised at once
    assert engine.calls == 2
    assert sleep.delays == [7.0]  # the plan's backoff
    assert [kind for kind, _ in asked] == [Kind.OVERLOADED, Kind.RATE_LIMITED]
    assert all(key == MODEL_REQUEST_KEY for _, key in asked)


@pytest.mark.anyio
async def test_a_timed_out_model_call_is_replayed_because_a_model_request_applies_nothing() -> None:
    """A timeout may have "applied" — for a model request that is harmless, so retryplan's replay
    path (by the request's key) is the resend it always was."""
    assert retryplan.plan(Kind.TIMEOUT, idempotency_key=MODEL_REQUEST_KEY) is retryplan.Path.REPLAY
    engine = Flaky([Kind.TIMEOUT])
    turn = await complete_with_retries(engine, REQ, step_retries=1, sleep=FakeSleep())
    assert turn is OK
    assert engine.calls == 2
