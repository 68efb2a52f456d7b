"""sideeffect value types: actions, leases, outcomes and what a store reports.

Contract:
- `Action` names one logical side effect: `key` (its idempotency key: retries of the same logical
  action share it), `resource` (what it exclusively needs while it runs) and `retry_safety`. The
  zero value `RetrySafety.UNDECLARED` is treated as the weakest: an attempt that may have applied
  must be reconciled before the key runs again. Only `SAFE` (the downstream deduplicates by the
  key) lets an expired attempt be re-granted.
- `Lease` is the right to run one attempt: its `fence` is monotonic per resource and identifies the
  attempt; downstream writes carry it so a stale holder's late write is refused.
- Every value here is immutable; nothing here reads a clock or a store.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass

from yagent.kernel.durable.clock import Clock as Clock
from yagent.kernel.durable.clock import SystemClock as SystemClock
from yagent.kernel.durable.sideeffect.errors import InvalidArgumentError


class RetrySafety(enum.StrEnum):
    """Whether running an action twice is harmless. Undeclared is treated as unsafe."""

    UNDECLARED = ""
    UNSAFE = "unsafe"
    SAFE = "safe"


class State(enum.StrEnum):
    """Where a key stands in a store."""

    IN_FLIGHT = "in_flight"  # an attempt holds (or held) the intent; no outcome recorded yet
    COMPLETED = "completed"  # applied and recorded; the key never runs again
    UNCERTAIN = "uncertain"  # may have applied; refuses to run until resolved
    WITHDRAWN = "withdrawn"  # certainly not applied (abandoned or resolved so); runnable again


class Outcome(enum.StrEnum):
    """What an acquire or an execution came to. Contention is an outcome, never an exception."""

    GRANTED = "granted"  # acquire only: this caller holds a fresh lease and an intent
    APPLIED = "applied"  # the effect ran and its result is recorded
    ALREADY_DONE = "already_done"  # an earlier attempt completed; its result is returned
    CONTENDED = "contended"  # the key is in flight elsewhere or the resource is held
    UNCERTAIN = "uncertain"  # may have applied: reconcile, then `resolve_uncertain`
    FAILED = "failed"  # the effect certainly did not apply (or is retry-safe); nothing recorded
    LEASE_LOST = "lease_lost"  # the lease was lost before apply; nothing was applied
    UNRECORDED = "unrecorded"  # applied, but the store refused or failed to record it


def _require_text(name: str, value: object) -> None:
    if not isinstance(value, str) or not value:
        raise InvalidArgumentError(f"sideeffect: {name} must be a non-empty string, got {value!r}")


def require_ttl(ttl: object) -> float:
    """`ttl` as float seconds; refuses anything that is not a finite positive number."""
    if isinstance(ttl, bool) or not isinstance(ttl, int | float) or not math.isfinite(ttl):
        raise InvalidArgumentError(f"sideeffect: ttl must be a finite number, got {ttl!r}")
    if ttl <= 0:
        raise InvalidArgumentError(f"sideeffect: ttl must be positive, got {ttl!r}")
    return float(ttl)


def require_holder(holder: object) -> str:
    _require_text("holder", holder)
    return str(holder)


def require_result(result: object) -> bytes:
    """Results are opaque bytes (the host encodes); anything else is refused before writing."""
    if not isinstance(result, bytes):
        raise InvalidArgumentError(f"sideeffect: result must be bytes, got {type(result).__name__}")
    return result


@dataclass(frozen=True, slots=True)
class Action:
    """One logical side effect."""

    key: str
    resource: str
    retry_safety: RetrySafety = RetrySafety.UNDECLARED

    def __post_init__(self) -> None:
        _require_text("action key", self.key)
        _require_text("action resource", self.resource)
        if not isinstance(self.retry_safety, RetrySafety):
            raise InvalidArgumentError(
                f"sideeffect: retry_safety must be a RetrySafety, got {self.retry_safety!r}"
            )


@dataclass(frozen=True, slots=True)
class Lease:
    """The right to run one attempt of `key` on `resource` until `expires_at`."""

    key: str
    resource: str
    fence: int
    holder: str
    expires_at: float

    def __post_init__(self) -> None:
        _require_text("lease key", self.key)
        _require_text("lease resource", self.resource)
        _require_text("lease holder", self.holder)
        if isinstance(self.fence, bool) or not isinstance(self.fence, int) or self.fence < 1:
            raise InvalidArgumentError(f"sideeffect: fence must be an int >= 1, got {self.fence!r}")


@dataclass(frozen=True, slots=True)
class Grant:
    """The answer of `Store.acquire`.

    `lease` is set exactly when `outcome` is GRANTED; `result` when ALREADY_DONE; `blocked_until`
    (the blocking lease's expiry) when CONTENDED.
    """

    outcome: Outcome
    lease: Lease | None = None
    result: bytes | None = None
    reason: str = ""
    blocked_until: float | None = None

    @property
    def granted(self) -> bool:
        return self.outcome is Outcome.GRANTED


@dataclass(frozen=True, slots=True)
class Record:
    """A key's stored state as seen at one instant (`needs_reconciliation` judged then)."""

    key: str
    state: State
    resource: str
    fence: int
    holder: str
    expires_at: float
    retry_safety: RetrySafety
    released: bool
    result: bytes | None
    reason: str
    needs_reconciliation: bool


@dataclass(frozen=True, slots=True)
class Resolution:
    """The answer of `Store.resolve_uncertain`: `resolved` is True only for the first resolution.

    `record` is the key's state afterwards (None when the store has never seen the key).
    """

    resolved: bool
    record: Record | None
    reason: str


@dataclass(frozen=True, slots=True)
class Backlog:
    """The keys that need reconciliation; `truncated` says more exist beyond the limit asked."""

    records: tuple[Record, ...]
    truncated: bool
