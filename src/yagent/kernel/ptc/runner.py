"""ptc runner (in-process form): run a program in a V8 isolate inside this process.

Contract:
- Refuses before anything runs: bindings without a dispatcher, or with a dispatcher whose chain
  has no stage, raise `UnmanagedError` (kind `unmanaged`) unless `allow_unmanaged` is set
  explicitly (the repository's archcheck policy forbids that literal outside tests). A program with
  no bindings (pure computation) needs no chain.
- Budgets: the wall deadline is the earlier of `budget.wall` and the caller's anyio deadline;
  calls, bytes and heap as `Budget` says. Crossing any of them raises `AbortedError` whose `cause`
  names the budget (kind `budget`), with the console lines and host calls made so far.
- Returns a `Result` when the program settles (a value, or the error it threw — a rejection it did
  not catch keeps the rejection's kind, any other throw is `runtime`, a program that does not
  compile is `invalid_args`).
The in-process form bounds V8's heap but not the process's other memory; use the subprocess
form (`run_subprocess`) when the host must be isolated from the program's memory.
"""

from __future__ import annotations

import anyio

from yagent.kernel.ptc import engine
from yagent.kernel.ptc.bindings import Bindings
from yagent.kernel.ptc.budget import Budget, deadline_detail, wall_deadline
from yagent.kernel.ptc.dispatch import Dispatcher, is_managed
from yagent.kernel.ptc.errors import AbortedError, Stop, UnmanagedError
from yagent.kernel.ptc.result import Final, LogBook, Observer, Result, Usage, finish
from yagent.kernel.ptc.session import HostSession, Scope


def check_managed(
    bindings: Bindings, dispatcher: Dispatcher | None, *, allow_unmanaged: bool
) -> None:
    """Refuse bindings that no chain would judge (see the module contract)."""
    if not len(bindings):
        return
    if dispatcher is None:
        raise UnmanagedError(
            f"{len(bindings)} tools are bound but no dispatcher is given: nothing could run "
            "their calls through a judgement chain"
        )
    if not is_managed(dispatcher) and not allow_unmanaged:
        raise UnmanagedError(
            f"{len(bindings)} tools are bound but their dispatcher has no judgement chain "
            "(or an empty one): refusing to run a program around the gates; pass "
            "allow_unmanaged only where every bound tool is judged elsewhere"
        )


async def run(
    program: str,
    bindings: Bindings | None = None,
    dispatcher: Dispatcher | None = None,
    *,
    budget: Budget | None = None,
    scope: Scope | None = None,
    allow_unmanaged: bool = False,
    observer: Observer | None = None,
) -> Result:
    """Run `program` (the body of an async function of `host` and `console`) in-process."""
    bindings = bindings if bindings is not None else Bindings.empty()
    budget = budget or Budget()
    check_managed(bindings, dispatcher, allow_unmanaged=allow_unmanaged)
    session = HostSession(
        bindings,
        dispatcher,
        budget,
        scope=scope,
        allow_unmanaged=allow_unmanaged,
        observer=observer,
    )
    logs = LogBook(budget.logs)
    deadline, deadline_cause = wall_deadline(budget)
    started = anyio.current_time()
    final: Final | None = None
    stop: Stop | None = None
    with anyio.CancelScope(deadline=deadline):
        try:
            final = await engine.run(program, bindings.idents, budget, session.answer, logs)
        except Stop as exc:
            stop = exc
    if final is None and stop is None:  # only the deadline leaves neither
        stop = Stop(deadline_cause, deadline_detail(deadline_cause, budget))
    usage = Usage(session.meter.calls, session.meter.bytes, anyio.current_time() - started)
    if stop is not None or final is None:
        assert stop is not None
        raise AbortedError(
            stop.cause,
            stop.detail,
            logs=tuple(logs.lines),
            calls=tuple(session.records),
            usage=usage,
        )
    return finish(final, logs, session.records, usage, cap=budget.result)
