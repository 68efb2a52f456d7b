"""yagent.memory: the session store — sessions, messages, the rollout, tool calls, usage,
checkpoints and the compaction archive, in one SQLite file under `~/.yagent/` (or `$YAGENT_HOME`).

Guarantees: every record of a session has a gapless per-kind `seq` even with several threads and
processes writing (WAL, busy timeout, `BEGIN IMMEDIATE`); payloads are JSON objects checked before
anything is written (`TypeError` otherwise); a write for an unknown session raises
`SessionNotFoundError`; unknown cost stays unknown in usage totals; the latest checkpoint per
delegation wins; `write_records` stores several records of a session (`Pending*`) in one
transaction, in order (`memory.pending`). Refuses: files of a newer schema, of another program,
or not SQLite at all — untouched; an empty (0-byte, truncated) or damaged file
(`DamagedStoreError`) — never written over; a full disk is `StoreFullError` (the write did not
happen). Leaves to the host: what messages and event payloads contain, when to checkpoint, and
what a session's status means.
"""

from yagent.memory.errors import (
    AmbiguousSessionError,
    BatchFailedError,
    DamagedStoreError,
    NewerSchemaError,
    SchemaError,
    SessionNotFoundError,
    SessionStoreError,
    StoreBusyError,
    StoreClosedError,
    StoreFullError,
    StoreUnavailableError,
    ToolCallNotFoundError,
)
from yagent.memory.log import message_body
from yagent.memory.pending import (
    Pending,
    PendingCall,
    PendingEvent,
    PendingMessage,
    PendingResult,
    PendingUsage,
)
from yagent.memory.records import (
    MESSAGE_META_KEYS,
    STATUSES,
    SUB_AGENT_ACTIVITY,
    ArchiveRecord,
    Checkpoint,
    Clock,
    EventRecord,
    RolloutSummary,
    SessionInfo,
    Status,
    ToolCallRecord,
    UsageRecord,
    UsageTotals,
)
from yagent.memory.schema import latest_version
from yagent.memory.store import DB_NAME, EXPORT_FORMAT, SessionStore, default_path

__all__ = [
    "DB_NAME",
    "EXPORT_FORMAT",
    "MESSAGE_META_KEYS",
    "STATUSES",
    "SUB_AGENT_ACTIVITY",
    "AmbiguousSessionError",
    "ArchiveRecord",
    "BatchFailedError",
    "Checkpoint",
    "Clock",
    "DamagedStoreError",
    "EventRecord",
    "NewerSchemaError",
    "Pending",
    "PendingCall",
    "PendingEvent",
    "PendingMessage",
    "PendingResult",
    "PendingUsage",
    "RolloutSummary",
    "SchemaError",
    "SessionInfo",
    "SessionNotFoundError",
    "SessionStore",
    "SessionStoreError",
    "Status",
    "StoreBusyError",
    "StoreClosedError",
    "StoreFullError",
    "StoreUnavailableError",
    "ToolCallNotFoundError",
    "ToolCallRecord",
    "UsageRecord",
    "UsageTotals",
    "default_path",
    "latest_version",
    "message_body",
]
