"""The values the store hands out: frozen dataclasses, each with a JSON-ready `to_dict()`.

Times are seconds since the epoch (float) from the store's clock. `delegation_id` "" means the
top-level run; a sub-agent's records carry the delegation that started it. `seq` is the record's
position in its session, per record kind, starting at 1 with no gaps.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Literal

from yagent.kernel.durable.clock import Clock as Clock

Status = Literal["active", "finished", "failed", "cancelled", "paused"]
STATUSES: tuple[str, ...] = ("active", "finished", "failed", "cancelled", "paused")

# The rollout record a loop writes for every step that ran tool calls. The step count of a run is
# read from these records only (never guessed from assistant turns), so writer and reader share
# this one name.
SUB_AGENT_ACTIVITY = "sub_agent_activity"

# Keys `messages()` adds to each stored message; a message to append may not carry them.
MESSAGE_META_KEYS: tuple[str, ...] = ("seq", "ts", "agent", "delegation_id")


class _Record:
    __slots__ = ()

    def to_dict(self) -> dict[str, Any]:
        result: dict[str, Any] = dataclasses.asdict(self)  # type: ignore[call-overload]
        return result


@dataclass(frozen=True, slots=True)
class SessionInfo(_Record):
    id: str
    created_at: float
    updated_at: float
    workspace: str
    title: str
    model: str
    status: str
    meta: dict[str, Any]


@dataclass(frozen=True, slots=True)
class EventRecord(_Record):
    seq: int
    ts: float
    type: str
    delegation_id: str
    payload: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ToolCallRecord(_Record):
    """One tool call; until its result is recorded, `ended_at`, `content` and `ok` are None."""

    seq: int
    call_id: str
    name: str
    arguments: str
    delegation_id: str
    started_at: float
    ended_at: float | None
    content: str | None
    ok: bool | None
    kind: str | None


@dataclass(frozen=True, slots=True)
class UsageRecord(_Record):
    seq: int
    ts: float
    model: str
    delegation_id: str
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    cost: float | None


@dataclass(frozen=True, slots=True)
class UsageTotals(_Record):
    """Sums over usage records. `cost` sums the known costs only: when `cost_complete` is False,
    `unpriced_calls` records had no known cost and `cost` is a lower bound (None when no record
    had a known cost at all). An empty session is complete at cost 0."""

    calls: int
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    cost: float | None
    cost_complete: bool
    unpriced_calls: int


@dataclass(frozen=True, slots=True)
class Checkpoint(_Record):
    seq: int
    ts: float
    delegation_id: str
    step: int
    data: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ArchiveRecord(_Record):
    seq: int
    ts: float
    kind: str
    payload: dict[str, Any]


@dataclass(frozen=True, slots=True)
class RolloutSummary(_Record):
    """Step facts of one run: `effective_steps` counts its `sub_agent_activity` records (steps
    that ran tools); `assistant_turns` counts its assistant messages, for comparison only."""

    effective_steps: int
    assistant_turns: int
