"""commitgate: the terminal state of a (run, step) is committed once — by exactly one branch.

Guarantees: `statemachine` judges whether a move is legal and `checkpoint`'s seq gate orders
snapshots, but neither can stop two concurrent branches from both believing they won. The gate
can: `acquire` hands out one live holding per (run, step), with a token minted by the gate and
unique per acquisition; only the current, live token commits, only a state of the host's terminal
vocabulary, only once; `release_lease(token)` frees exactly that holding, so a late release
(after expiry and take-over, or after the same holder name re-acquired) frees nobody else's gate.
Every acquire ends in a commit or a release (or lapses after its ttl).
Refuses: commits by a stale, expired or forged token, states outside the vocabulary, an empty
vocabulary. Leaves to the host: the terminal vocabulary itself, what to do when a branch loses
(HELD / COMMITTED are outcomes, not errors), and conflicts between branches' *results* — the
gate decides who commits, not which result is right.
Backends: `MemoryGate` (one process) and `SqliteGate` (across processes on one machine); any
other backend runs `kernel.testing.commitgatesuite`.
"""

from yagent.kernel.durable.commitgate.sqlite import SqliteGate
from yagent.kernel.durable.commitgate.store import (
    ClockedGate,
    Gate,
    MemoryGate,
    RowGate,
    mint_token,
)
from yagent.kernel.durable.commitgate.types import (
    Acquired,
    Clock,
    Commit,
    CommitGateError,
    Holding,
    InvalidArgumentError,
    LeaseExpiredError,
    NotTerminalError,
    Outcome,
    StaleTokenError,
    StoreError,
    SystemClock,
    TokenError,
)

__all__ = [
    "Acquired",
    "Clock",
    "ClockedGate",
    "Commit",
    "CommitGateError",
    "Gate",
    "Holding",
    "InvalidArgumentError",
    "LeaseExpiredError",
    "MemoryGate",
    "NotTerminalError",
    "Outcome",
    "RowGate",
    "SqliteGate",
    "StaleTokenError",
    "StoreError",
    "SystemClock",
    "TokenError",
    "mint_token",
]
