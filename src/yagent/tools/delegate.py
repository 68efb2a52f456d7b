"""The `delegate` executor: one task handed to another agent through the host's runner.

Contract:
- The executor only forwards: the host puts a `Delegator` in the run's tool services under
  `RUNNER_KEY` (`tools.hostservices`; `app.delegation` does, for every run); it decides topology,
  pools, worktree claims, timeouts and the board, and returns the text the delegating model reads
  (`format_for_director`). A refusal (topology, overlap, an unknown agent) comes back as that text —
  a result, never an exception.
- Without a runner the call is refused as NOT WIRED (kind FORBIDDEN): a host that offers the tool
  but cannot run delegations says so instead of pretending the work was done.
- The call id is the executor's own `Invocation`'s (`ToolContext.call`), so concurrent delegate
  calls of one step each see their own.
"""

from __future__ import annotations

from yagent.kernel.judge import toolfail
from yagent.tools.adapter import ToolContext
from yagent.tools.hostservices import RUNNER_KEY, Request
from yagent.tools.invocation import needs
from yagent.toolspec.delegate import DelegateArgs


class NotWiredError(toolfail.ToolFailure):
    def __init__(self) -> None:
        super().__init__(
            toolfail.Kind.FORBIDDEN,
            "delegate is not wired in this host: no delegation runner exists for this run, so "
            "nothing was delegated; do the work yourself or report that it cannot be done",
        )


@needs(RUNNER_KEY)
async def delegate(ctx: ToolContext, args: DelegateArgs) -> str:
    call_id = ctx.call.call_id
    runner = ctx.services.get(RUNNER_KEY)
    if runner is None:
        raise NotWiredError()
    request = Request(call_id, args.agent, args.task, tuple(args.write), tuple(args.read))
    text: str = await runner.delegate(request)
    return text
