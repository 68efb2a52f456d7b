"""guardset: a set of independent guards judged together, merged into one verdict, swapped whole.

Guarantees:
- `Set.evaluate(call)` asks every guard (an `invoke.Chain` stops at the first denial, so the model
  would hear one reason at a time; here it hears all of them) and merges the answers into one
  `Outcome`: denials ordered by (rank, name), retryable only if every denial is, guidance pointing
  at the denial that really blocks; a PROMPT among ALLOWs is a PROMPT; a guard that raises is an
  internal DENY with the exception chained (fail closed).
- `stage(set_or_assembly)` makes the whole set one ring of the chain.
- `Assembly` revokes by swapping the whole set (compare-and-swap over `mutate(old)`, no lost
  updates), stamps the generation into the swapped set, notifies subscribers without letting
  their failures undo a committed swap, and refuses an empty set.
Refuses: empty sets, duplicate guard names, revoking unknown guards.
Leaves to the host: the guards themselves (disclosure gate, egress gate, audit gate, ...), their
ranks, and what to do with a PROMPT.
"""

from yagent.kernel.judge.guardset.assembly import (
    DEFAULT_MAX_ATTEMPTS,
    Assembly,
    ContentionError,
    GuardStage,
    SubscriberFailure,
    SwapRecord,
    stage,
)
from yagent.kernel.judge.guardset.core import (
    STAGE_NAME,
    DuplicateGuardError,
    EmptySetError,
    Guard,
    GuardsetError,
    Outcome,
    Set,
    UnknownGuardError,
    merge,
)

__all__ = [
    "DEFAULT_MAX_ATTEMPTS",
    "STAGE_NAME",
    "Assembly",
    "ContentionError",
    "DuplicateGuardError",
    "EmptySetError",
    "Guard",
    "GuardStage",
    "GuardsetError",
    "Outcome",
    "Set",
    "SubscriberFailure",
    "SwapRecord",
    "UnknownGuardError",
    "merge",
    "stage",
]
