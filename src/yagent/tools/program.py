"""run_program: programmatic tool calling wired into the tool execution layer (issue 10).

Contract:
- The bindings are the run's *visible* tools (`Surface.visible_specs()`, the same set a direct
  call may reach), minus `run_program` itself (no recursion) and flow-control / meta tools (ending
  the run, asking the user, loading tools are the loop's business, not a program's). Their call
  forms come from the surface's catalog entries, so the program sees what `tooldisclose` shows.
- Every `host.*()` call is `Adapter.call` — JSON arguments, the Surface's `invoke` chain (hooks,
  tooldisclose gate, workspace boundary, authorization with the person asked exactly as for a
  direct call), the real executor, `toolfail` classification. The adapter's judgement travels
  back as the evidence `yagent.kernel.ptc` requires; a denial reaches the program as a rejected
  promise with the same reason, kind and stage the model would have read.
- The executor returns the merged value (or its visibly truncated text), the console lines and
  counts, and `budget`: what the program spent against each limit (wall seconds, host calls, bytes
  returned to it). A program that throws is a failed call of kind `runtime` (a denial it did not
  catch stays a `permission`; a program that does not compile is `invalid_args`); a budget abort is
  a `budget` failure naming the budget. A failure's text ends with the same budget line, so the
  model sees what was spent either way.
What a program may call, and the system prompt's section on programs, are
`tools.programbindings` (read before the first model request; this module loads at the first
`run_program` call). Host seams in `ToolContext.services` (`tools.hostservices`): `ADAPTER_KEY`
(the running adapter, so programs reach the same executors — MCP included; otherwise the built-in
ones the registry hands in), `OBSERVER_KEY` (called per host call, for the trajectory). Host calls
are numbered `<id>#<n>` after the program call's own id (`ToolContext.call`).
`USE_SUBPROCESS` (module seam) runs programs in the worker process form instead of in-process.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from yagent.kernel.judge import toolfail
from yagent.kernel.judge.invoke import Call, Chain
from yagent.kernel.ptc.budget import Budget
from yagent.kernel.ptc.dispatch import Reply
from yagent.kernel.ptc.errors import AbortedError
from yagent.kernel.ptc.result import Usage
from yagent.kernel.ptc.runner import run
from yagent.kernel.ptc.session import Scope
from yagent.kernel.ptc.subproc import SubprocessOptions, run_subprocess
from yagent.tools.adapter import Adapter, Executor, ToolContext
from yagent.tools.hostservices import ADAPTER_KEY, OBSERVER_KEY
from yagent.tools.invocation import needs
from yagent.tools.programbindings import bindings_for
from yagent.toolspec.program import DEFAULT_TIMEOUT, NAME, RunProgramArgs

USE_SUBPROCESS = False


class AdapterDispatcher:
    """Each host call is `Adapter.call`: the Surface's chain and the real executors."""

    def __init__(self, adapter: Adapter) -> None:
        self.adapter = adapter

    @property
    def chain(self) -> Chain | None:
        return self.adapter.surface.chain

    async def dispatch(self, call: Call) -> Reply:
        result = await self.adapter.call(
            call.tool, dict(call.args), call.call_id, caller=call.caller, depth=call.depth
        )
        judgement = result.judgement
        executed = judgement is not None and judgement.verdict.allowed
        if result.ok:
            value = result.data if result.data is not None else json.loads(result.content)
            return Reply(True, value, executed=True, judgement=judgement)
        body = _failure_body(result.content)
        return Reply(
            False,
            None,
            str(body.get("error", result.content)),
            result.kind or toolfail.Kind.UNKNOWN,
            str(body.get("stage", "")),
            executed,
            judgement,
        )


def _failure_body(content: str) -> dict[str, Any]:
    try:
        body = json.loads(content)
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}


def _adapter(ctx: ToolContext, builtin: Mapping[str, Executor] | None) -> Adapter:
    running = ctx.services.get(ADAPTER_KEY)
    if running is not None:
        return running
    if builtin is None:
        raise toolfail.ToolFailure(
            toolfail.Kind.INTERNAL,
            "run_program has no executors: the host set no running adapter and no built-in set",
        )
    return Adapter(ctx, dict(builtin))


@needs(ADAPTER_KEY, OBSERVER_KEY)
async def run_program(
    ctx: ToolContext, args: RunProgramArgs, builtin: Mapping[str, Executor] | None = None
) -> dict[str, Any]:
    """Run the program; see the module contract. `builtin` serves the host calls when the context
    holds no running adapter (the registry passes its own executors: it lists this one)."""
    bindings = bindings_for(ctx.surface)
    dispatcher = AdapterDispatcher(_adapter(ctx, builtin))
    budget = Budget(wall=args.timeout or DEFAULT_TIMEOUT)
    scope = Scope(parent_id=ctx.call.call_id or NAME, caller=NAME)
    observer = ctx.services.get(OBSERVER_KEY)
    try:
        if USE_SUBPROCESS:
            result = await run_subprocess(
                args.program,
                bindings,
                dispatcher,
                options=SubprocessOptions(budget=budget),
                scope=scope,
                observer=observer,
            )
        else:
            result = await run(
                args.program, bindings, dispatcher, budget=budget, scope=scope, observer=observer
            )
    except AbortedError as exc:
        spent = exc.usage or Usage(calls=len(exc.calls))
        raise toolfail.ToolFailure(exc.kind, f"{exc}\n{_budget_line(spent, budget)}") from exc
    if not result.ok:
        kind = result.kind or toolfail.Kind.RUNTIME
        raise toolfail.ToolFailure(kind, f"{result.render()}\n{_budget_line(result.usage, budget)}")
    out: dict[str, Any] = {
        "value": result.value,
        "host_calls": result.usage.calls,
        "budget": budget_usage(result.usage, budget),
    }
    if result.truncated:
        out["value_text"] = result.output
        out["note"] = (
            f"result truncated: {len(result.output)} of {result.value_size} characters shown; "
            "return a smaller, merged value"
        )
    if result.logs:
        out["console"] = list(result.logs)
    if result.logs_dropped:
        out["console_dropped"] = result.logs_dropped
    if result.unawaited:
        out["unawaited"] = f"{result.unawaited} host calls were never awaited and did not run"
    return out


def budget_usage(usage: Usage, budget: Budget) -> dict[str, Any]:
    """What a program spent against each hard limit."""
    return {
        "wall_seconds": round(usage.elapsed, 3),
        "wall_limit_seconds": budget.wall,
        "calls": usage.calls,
        "calls_limit": budget.calls,
        "bytes": usage.bytes,
        "bytes_limit": budget.bytes,
    }


def _budget_line(usage: Usage, budget: Budget) -> str:
    return (
        f"[budget: {usage.elapsed:.2f}s of {budget.wall:g}s wall, {usage.calls} of "
        f"{budget.calls} host calls, {usage.bytes} of {budget.bytes} bytes returned]"
    )
