"""Step retries for model calls, decided by `kernel.durable.retryplan` over the `toolfail` table.

Contract:
- `complete_with_retries` runs one model call to its end and asks `retryplan.explain` what to do
  with each failure: it retries only when the plan retries (rate limits, overload, timeouts,
  transient connection errors), at most `step_retries` times, sleeping the plan's backoff before
  each retry. A failure the plan does not retry (auth, bad request, unknown …) is raised at once,
  unchanged.
- `step_retries` has no default: each agent passes its own (no central default silently
  applies). Negative values are refused.
- A model request applies nothing, so it is its own idempotency key (`MODEL_REQUEST_KEY`): where
  the plan says "replay through the key" (a timeout, a dropped connection — it may have run), the
  replay is sending the same request again. `resend_safe` therefore does not stop model retries;
  it governs tool calls.
- When the retries are used up, the last error is raised with its kind and a note of how many
  retries were made. Each retry is shown to `on_retry` (attempt, error, delay) so the host can log
  it; a retried stream may already have emitted deltas, which the host should treat as superseded.
- Cancellation is never retried: it is not an `EngineError` and passes straight through.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import anyio

from yagent.kernel.durable import retryplan
from yagent.llm.types import AssistantTurn, Engine, EngineError, Request, complete

Sleep = Callable[[float], Awaitable[None]]
OnRetry = Callable[[int, EngineError, float], None]

MODEL_REQUEST_KEY = "model-request"  # a model request applies nothing: replaying it is resending


async def complete_with_retries(
    engine: Engine,
    request: Request,
    *,
    step_retries: int,
    sleep: Sleep = anyio.sleep,
    on_retry: OnRetry | None = None,
) -> AssistantTurn:
    """The completed turn, retrying retryable failures up to `step_retries` times."""
    if step_retries < 0:
        raise ValueError(f"step_retries must be >= 0, got {step_retries}")
    attempt = 0
    while True:
        try:
            return await complete(engine, request)
        except EngineError as exc:
            plan = retryplan.explain(exc.kind, idempotency_key=MODEL_REQUEST_KEY)
            if not plan.retries:
                raise
            if attempt >= step_retries:
                if attempt == 0:
                    raise
                raise EngineError(exc.kind, f"{exc} (gave up after {attempt} retries)") from exc
            attempt += 1
            delay = plan.delay(attempt)
            if on_retry is not None:
                on_retry(attempt, exc, delay)
            await sleep(delay)
