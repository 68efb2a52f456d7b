"""checkpoint: progress snapshots of a run and the pure decision to continue it, not replay it.

Guarantees:
- `decide(run_id, plan, snapshot)` is a pure function: holes are not trusted (a completion after
  a missing step is redone unless the step declared `depends_on` that are all trusted, or is
  `isolated`), terminal runs are never reopened automatically, and a snapshot that does not fit
  the plan is a MISMATCH that trusts and schedules nothing. Zero-valued declarations keep the
  strict-prefix rule.
- The sequence gate is monotonic: `StoreCAS.save_if_newer` writes only a seq above the stored
  one and never seq 0 (`StaleSeqError`, nothing written), atomically — across processes for
  `SqliteStore`. `Committer` is the one write path: grab seq → save → give the seq back only on
  failure, serialised per run. A `StepsCAS` store (both here) also saves a snapshot by its
  changed steps (`Committer.commit_steps`): a run that adds a step writes that step only.
Refuses: malformed plans (duplicates, dependencies not listed earlier, isolated with
dependencies), completions without a result digest, unreadable stored rows.
Leaves to the host: what a step's result is (only its digest is kept here), the storage medium
beyond memory and SQLite (a host store runs `kernel.testing.checkpointsuite`), and the decision
to reopen a terminal run or to take over a run another writer is ahead on (`Committer.resync`).
"""

from yagent.kernel.durable.checkpoint.committer import Committer
from yagent.kernel.durable.checkpoint.errors import (
    CheckpointError,
    InvalidArgumentError,
    PlanError,
    StaleSeqError,
    StoreError,
)
from yagent.kernel.durable.checkpoint.resume import (
    Resume,
    ResumeAction,
    SeqGate,
    decide,
    require_newer,
)
from yagent.kernel.durable.checkpoint.store import MemoryStore, SqliteStore, StepsCAS, StoreCAS
from yagent.kernel.durable.checkpoint.types import (
    RunProgress,
    RunState,
    StepDef,
    StepRecord,
    StepStatus,
    digest,
    validate_plan,
)

__all__ = [
    "CheckpointError",
    "Committer",
    "InvalidArgumentError",
    "MemoryStore",
    "PlanError",
    "Resume",
    "ResumeAction",
    "RunProgress",
    "RunState",
    "SeqGate",
    "SqliteStore",
    "StaleSeqError",
    "StepDef",
    "StepRecord",
    "StepStatus",
    "StepsCAS",
    "StoreCAS",
    "StoreError",
    "decide",
    "digest",
    "require_newer",
    "validate_plan",
]
