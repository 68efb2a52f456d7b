"""toolspec.program: the `run_program` tool — programmatic tool calling (issue 10).

Facts declared here and nowhere else:
- `run_program` takes a JavaScript program (the body of an async function) whose `host.<tool>()`
  calls reach the run's visible tools; each such call passes the same judgement ring as a direct
  call. Its own effect is `EXEC` and it is `serial`: what it does is whatever its calls do, so it
  is never admitted to run in parallel with other calls, and a profile grants it explicitly.
- HOT: the point is to replace many round trips, which only works when the model sees it.
Registered in `builtin.BUILTIN`; Coding and DevOps get it through EXEC, Repo by name.
"""

from __future__ import annotations

from pydantic import Field

from yagent.toolspec.params import Args
from yagent.toolspec.spec import Effect, Tier, make_spec

NAME = "run_program"
DEFAULT_TIMEOUT = 30.0
MAX_TIMEOUT = 300.0


class RunProgramArgs(Args):
    program: str = Field(
        min_length=1,
        description=(
            "JavaScript: the body of an async function. Call tools as `await host.<tool>(...)` "
            "(positional arguments in the order shown, or one object of named arguments); "
            "`console.log` is captured; `return` a small JSON value — the merged answer, not "
            "the raw data."
        ),
    )
    timeout: float | None = Field(
        None,
        gt=0,
        le=MAX_TIMEOUT,
        description=f"Wall-clock seconds for the whole program (default {DEFAULT_TIMEOUT:g}).",
    )


RUN_PROGRAM = make_spec(
    NAME,
    "Run a JavaScript program that calls your tools as `await host.<tool>(...)` and returns only "
    "its small, merged result. Use it when a task needs many calls or much data to reach a "
    "short answer (scan many files, aggregate logs, check many items): one program replaces many "
    "round trips and the raw results never enter the conversation. Every call it makes is "
    "judged exactly like a direct call; a denial rejects the call's promise with `e.kind` and "
    "`e.message`. Budgets: time, number of calls, bytes returned, memory.",
    RunProgramArgs,
    Effect.EXEC,
    Tier.HOT,
    serial=True,
    brief="Run a JS program that calls tools and returns a merged result.",
    own_timeout=lambda args: float(args.get("timeout") or DEFAULT_TIMEOUT),
)
