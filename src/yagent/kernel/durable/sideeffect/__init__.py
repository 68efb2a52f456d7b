"""sideeffect: side effects at most once, across processes.

Guarantees: one atomic `Store.acquire` judges the idempotency key, the execution intent and the
resource lease together (completed > uncertain > in flight > resource held > grant), so no gap
between "the lease is free" and "the key is new" lets one action apply twice. Leases carry a fence
that is monotonic per resource; a `FencedSink` downstream refuses a stale holder's late write in
the same atomic step as the write. Acquire records an intent, so a process that dies after the
effect and before the bookkeeping leaves a trace: once its lease expires the key needs
reconciliation instead of being granted again (unless the action is declared `RetrySafety.SAFE`).
An apply that cannot tell whether the remote side acted turns the key `UNCERTAIN` until
`resolve_uncertain` (first resolution wins). `abandon` (certainly not applied) and `release`
(gate only) are distinct exits. `execute_with` runs prepare → eligibility check → apply → record.
Refuses: recording, renewing or releasing by a holder that expired or lost the gate; a stale
fence marking uncertain or abandoning; guessing whether an ambiguous failure applied.
Leaves to the host: the reconciliation itself (asking the downstream whether the effect happened),
encoding results as bytes, and exactly-once, which needs the downstream to deduplicate by key.
"""

from yagent.kernel.durable.sideeffect.errors import (
    InvalidArgumentError,
    LeaseError,
    LeaseExpiredError,
    SideEffectError,
    StaleFenceError,
    StaleLeaseError,
    StoreError,
)
from yagent.kernel.durable.sideeffect.memory import MemoryStore
from yagent.kernel.durable.sideeffect.runner import (
    DEFAULT_TTL,
    Apply,
    Execution,
    Prepare,
    Runner,
    default_holder,
    execute_with,
)
from yagent.kernel.durable.sideeffect.sink import Entry, FencedSink, MemorySink, fence_accepts
from yagent.kernel.durable.sideeffect.sqlite import SqliteStore
from yagent.kernel.durable.sideeffect.store import ClockedStore, RowStore, Store, Tx
from yagent.kernel.durable.sideeffect.types import (
    Action,
    Backlog,
    Clock,
    Grant,
    Lease,
    Outcome,
    Record,
    Resolution,
    RetrySafety,
    State,
    SystemClock,
)

__all__ = [
    "DEFAULT_TTL",
    "Action",
    "Apply",
    "Backlog",
    "Clock",
    "ClockedStore",
    "Entry",
    "Execution",
    "FencedSink",
    "Grant",
    "InvalidArgumentError",
    "Lease",
    "LeaseError",
    "LeaseExpiredError",
    "MemorySink",
    "MemoryStore",
    "Outcome",
    "Prepare",
    "Record",
    "Resolution",
    "RetrySafety",
    "RowStore",
    "Runner",
    "SideEffectError",
    "SqliteStore",
    "StaleFenceError",
    "StaleLeaseError",
    "State",
    "Store",
    "StoreError",
    "SystemClock",
    "Tx",
    "default_holder",
    "execute_with",
    "fence_accepts",
]
