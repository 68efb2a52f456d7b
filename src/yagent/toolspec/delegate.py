"""toolspec.delegate: the `delegate` tool's Spec — handing one task to another agent.

Contract:
- Effect `DELEGATE`: granted by the Director's profile (and to a custom agent that names it); the
  delegated agent's own calls are judged one by one on its own Surface, so the delegation itself
  asks nobody.
- `concurrent`: delegate calls of one step are admitted to run together by the Surface's one
  parallel predicate; the host's per-run pool (`max_parallel_delegations`) and worktree claims
  bound and isolate them — the pool alone: the step's `max_parallel_tools` does not.
- `own_timeout` is unbounded (infinite): a delegation is supervised by its own idle and total
  timeouts (`delegate_idle_timeout`, `delegate_total_timeout`), counted from when it gets its
  pool slot — never by the host's per-call tool backstop, which would count the queueing.
Declarative only: `tools.delegate` executes it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from pydantic import Field

from yagent.toolspec.params import Args
from yagent.toolspec.spec import Effect, Tier, make_spec


class DelegateArgs(Args):
    agent: str = Field(description="Which agent does the task (coding, repo, devops, …).")
    task: str = Field(
        min_length=1,
        description="The complete, self-contained task: the agent sees nothing else of yours.",
    )
    write: list[str] = Field(
        default_factory=list,
        description="Workspace-relative paths the agent may change (exact directories or files; "
        "no wildcards). Two delegations running at once may not write overlapping areas.",
    )
    read: list[str] = Field(
        default_factory=list,
        description="Workspace-relative paths it may only read. With neither write nor read "
        "areas it may read the whole workspace and change nothing.",
    )


def _unbounded(args: Mapping[str, Any]) -> float:
    return math.inf


DELEGATE = make_spec(
    "delegate",
    "Hand one task to another agent and wait for its result (its deliverable, verbatim, or "
    "why it did not deliver). Several delegate calls in one step run in parallel, up to the "
    "run's pool; declare the areas each may write.",
    DelegateArgs,
    Effect.DELEGATE,
    Tier.HOT,
    brief="Delegate a task to another agent.",
    concurrent=True,
    own_timeout=_unbounded,
)
