"""ptc engine: drives one program in a fresh V8 isolate (mini-racer), step by step.

Contract:
- Every piece of JavaScript runs inside a driver step (`eval_cancelable`): install the prelude,
  start the program, then repeat drain → answer the queued host calls → deliver, until the
  program settles. No JavaScript runs between steps (the prelude removes every way to schedule
  some), so cancelling the awaiting task — the caller's deadline — terminates any runaway step,
  and the event loop is never blocked by the isolate.
- The isolate has a hard heap limit; crossing it is `Stop(heap)` whether V8 reports it as an OOM
  error or only through the limit flag. The driver's own code failing in V8 is `Stop(engine)`; a
  drain that is not the prelude's JSON is `Stop(protocol)`.
- A program still waiting when nothing is queued (`await new Promise(() => {})`) ends with an
  error: nothing could ever settle it. Host calls queued but never awaited when the program
  finished are not run; the final state counts them (`unawaited`).
- Console lines go to the `LogBook` at every drain, so they survive an abort.
The isolate is created per program and closed after it, whatever happened. mini-racer settles
its work on asyncio futures: the engine runs on anyio's asyncio backend (the project's only one).
mini-racer (V8) is imported when the first program runs, not with the kernel: a host that never
runs a program never loads it (lazy loading of a heavy optional dependency where it is used, not
an import loop hidden in a function).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

from yagent.kernel.ptc import prelude
from yagent.kernel.ptc.budget import Budget
from yagent.kernel.ptc.errors import Cause, Stop
from yagent.kernel.ptc.result import Final, LogBook

if TYPE_CHECKING:
    from py_mini_racer import MiniRacer

Answer = Callable[[list[Any]], Awaitable[list[dict[str, Any]]]]
"""Answers a batch of host call requests (in-process: a HostSession; in a worker: the pipe)."""

STALLED = (
    "the program is waiting on a promise nothing can settle (no host call is pending); "
    "await host calls, not timers or hand-made promises"
)


async def run(
    program: str,
    idents: Sequence[str],
    budget: Budget,
    answer: Answer,
    logs: LogBook,
) -> Final:
    """Run `program` to its end; see the module contract."""
    from py_mini_racer import MiniRacer  # V8 loads here (module contract)

    mr = MiniRacer()
    try:
        mr.set_hard_memory_limit(budget.heap)
        code = prelude.prelude(idents, log_cap=budget.logs, result_cap=budget.result)
        await _step(mr, code)
        await _step(mr, prelude.start(program))
        while True:
            state = _state(await _step(mr, prelude.DRAIN))
            logs.add(state.get("logs", ()), state.get("dropped", 0))
            calls = state.get("calls")
            if not isinstance(calls, list):
                raise Stop(Cause.PROTOCOL, "the drained state has no call list")
            if state.get("done") is True:
                return _final(state, unawaited=len(calls))
            if not calls:
                return Final(ok=False, error=STALLED, kind="runtime")
            answers = await answer(calls)
            await _step(mr, prelude.deliver(answers))
    finally:
        mr.close()


async def _step(mr: MiniRacer, code: str) -> Any:
    from py_mini_racer import JSEvalException, JSOOMException  # loaded by run()

    try:
        value = await mr.eval_cancelable(code)
    except JSOOMException as exc:
        raise Stop(Cause.HEAP, "the program exceeded the V8 heap limit") from exc
    except JSEvalException as exc:
        if mr.was_hard_memory_limit_reached():
            raise Stop(Cause.HEAP, "the program exceeded the V8 heap limit") from exc
        raise Stop(Cause.ENGINE, f"the engine failed on a driver step: {exc}") from exc
    if mr.was_hard_memory_limit_reached():
        raise Stop(Cause.HEAP, "the program exceeded the V8 heap limit")
    return value


def _state(raw: Any) -> dict[str, Any]:
    if not isinstance(raw, str):
        raise Stop(Cause.PROTOCOL, f"the drained state is not text: {type(raw).__name__}")
    try:
        state = json.loads(raw)
    except ValueError as exc:
        raise Stop(Cause.PROTOCOL, f"the drained state is not JSON: {exc}") from exc
    if not isinstance(state, dict):
        raise Stop(Cause.PROTOCOL, "the drained state is not an object")
    return state


def final_from(state: dict[str, Any], *, unawaited: int = 0) -> Final:
    """A `Final` from a settled state; anything off-shape is `Stop(protocol)`."""
    return _final(state, unawaited=unawaited)


def _final(state: dict[str, Any], *, unawaited: int) -> Final:
    if state.get("ok") is True:
        value, size = state.get("value"), state.get("size")
        if not isinstance(value, str) or not isinstance(size, int) or isinstance(size, bool):
            raise Stop(Cause.PROTOCOL, "a finished state without its value")
        if size <= len(value):
            try:
                json.loads(value)
            except ValueError as exc:
                detail = f"a finished state whose value is not JSON: {exc}"
                raise Stop(Cause.PROTOCOL, detail) from exc
        return Final(True, value, size, unawaited=unawaited)
    error, kind = state.get("error"), state.get("kind")
    if not isinstance(error, str) or not (kind is None or isinstance(kind, str)):
        raise Stop(Cause.PROTOCOL, "a failed state without its error")
    return Final(False, error=error, kind=kind, unawaited=unawaited)
