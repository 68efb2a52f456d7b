"""taskboard: the storage-neutral coordination contract for delegated work, and its invariants.

`dispatch` answers "may this be delegated"; this package answers what happens after: who is
responsible for which task, what it depends on, how it is handed back. Guarantees:
- a claim is atomic — of concurrent claims of one task exactly one wins (the board guarantees it;
  `concurrent_claim` checks the result);
- the claim token is minted by the board (`ClaimRequest` asks only for a ttl) and release,
  complete and fail act by token only — never by owner name or content, which a same-named
  agent or a "fail → release → retry" cycle would confuse;
- FAILED is not terminal: the task can be claimed again; DONE and CANCELLED are terminal; which
  operation may move a task from which status is one `kernel.durable.statemachine`
  table (`LIFECYCLE`);
- `check(snapshot)` judges the invariants: unique ids, dependencies exist and are acyclic,
  claimed ⇔ lease, no claim while a dependency is unfinished, terminal tasks have no owner.
Refuses: claims of finished or blocked tasks, stale, expired or unknown tokens, posts that
duplicate an id or name an unknown dependency, seeds that break an invariant.
Leaves to the host: what a task's payload and result mean, who may post or cancel, and any
storage beyond the memory and SQLite boards (a host board runs the `boardtest` suite).
"""

from yagent.kernel.durable.taskboard.check import Invariant, Violation, check
from yagent.kernel.durable.taskboard.lifecycle import LIFECYCLE, Event, IllegalMoveError
from yagent.kernel.durable.taskboard.race import Race, concurrent_claim
from yagent.kernel.durable.taskboard.sqlite import SqliteBoard
from yagent.kernel.durable.taskboard.store import (
    Board,
    ClockedBoard,
    MemoryBoard,
    RowBoard,
    mint_token,
)
from yagent.kernel.durable.taskboard.types import (
    AlreadyClaimedError,
    BlockedError,
    BoardState,
    ClaimError,
    ClaimRequest,
    Clock,
    DuplicateTaskError,
    FinishedError,
    InvalidArgumentError,
    InvariantError,
    Lease,
    LeaseExpiredError,
    NotFoundError,
    StaleTokenError,
    Status,
    StoreError,
    SystemClock,
    Task,
    TaskboardError,
    TokenError,
    UnknownDependencyError,
)

__all__ = [
    "LIFECYCLE",
    "AlreadyClaimedError",
    "BlockedError",
    "Board",
    "BoardState",
    "ClaimError",
    "ClaimRequest",
    "Clock",
    "ClockedBoard",
    "DuplicateTaskError",
    "Event",
    "FinishedError",
    "IllegalMoveError",
    "InvalidArgumentError",
    "Invariant",
    "InvariantError",
    "Lease",
    "LeaseExpiredError",
    "MemoryBoard",
    "NotFoundError",
    "Race",
    "RowBoard",
    "SqliteBoard",
    "StaleTokenError",
    "Status",
    "StoreError",
    "SystemClock",
    "Task",
    "TaskboardError",
    "TokenError",
    "UnknownDependencyError",
    "Violation",
    "check",
    "concurrent_claim",
    "mint_token",
]
