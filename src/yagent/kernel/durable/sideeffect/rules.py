"""sideeffect rules: every store's judgement, as pure functions over two rows.

Contract: a store keeps one row per key (`KeyRow`: the intent and its outcome) and one per resource
(`GateRow`: the highest fence issued and the current holder). Each operation reads the rows it
needs, calls one function here with the store's `now`, and writes the returned `Write` in the same
atomic transaction. The functions either return the rows to write or raise before anything is
written; they never read a clock or do I/O. Every store shares this one judgement, so two stores
cannot drift apart in what they decide — they differ only in how they make a transaction atomic.

Acquire judges in this order: completed > uncertain > in flight (live ⇒ contended; over ⇒ needs
reconciliation unless both the recorded and the new declaration are `SAFE`) > resource held >
grant. An attempt is *over* when its lease expired or was released without an outcome: nobody
will ever report on it, so whether it applied is unknown.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from yagent.kernel.durable.sideeffect.errors import LeaseExpiredError, StaleLeaseError
from yagent.kernel.durable.sideeffect.types import (
    Action,
    Grant,
    Lease,
    Outcome,
    Record,
    Resolution,
    RetrySafety,
    State,
)


@dataclass(frozen=True, slots=True)
class KeyRow:
    """A key's intent: the attempt that holds it (`fence`, `holder`, `expires_at`) and outcome."""

    key: str
    state: State
    resource: str
    fence: int
    holder: str
    expires_at: float
    retry_safety: RetrySafety
    released: bool = False
    result: bytes | None = None
    reason: str = ""


@dataclass(frozen=True, slots=True)
class GateRow:
    """A resource's gate: `fence` is the highest ever issued; `key` is None when nobody holds it."""

    resource: str
    fence: int
    key: str | None = None
    holder: str | None = None
    expires_at: float = 0.0


@dataclass(frozen=True, slots=True)
class Write:
    """Rows to upsert, in one transaction. Rows are never deleted: history stays inspectable."""

    key: KeyRow | None = None
    gate: GateRow | None = None


NOTHING = Write()


def live(expires_at: float, now: float) -> bool:
    """The one expiry comparison: a lease is live strictly before its expiry instant."""
    return now < expires_at


def attempt_live(row: KeyRow, now: float) -> bool:
    """The intent's attempt can still report: in flight, not released, not expired."""
    return row.state is State.IN_FLIGHT and not row.released and live(row.expires_at, now)


def needs_reconciliation(row: KeyRow, now: float) -> bool:
    """Whether a person or a reconciler must find out if this key's effect happened."""
    if row.state is State.UNCERTAIN:
        return True
    return (
        row.state is State.IN_FLIGHT
        and not attempt_live(row, now)
        and row.retry_safety is not RetrySafety.SAFE
    )


def gate_held(gate: GateRow | None, now: float) -> bool:
    return gate is not None and gate.key is not None and live(gate.expires_at, now)


def record_of(row: KeyRow, now: float) -> Record:
    return Record(
        key=row.key,
        state=row.state,
        resource=row.resource,
        fence=row.fence,
        holder=row.holder,
        expires_at=row.expires_at,
        retry_safety=row.retry_safety,
        released=row.released,
        result=row.result,
        reason=row.reason,
        needs_reconciliation=needs_reconciliation(row, now),
    )


def _over_reason(row: KeyRow) -> str:
    how = "was released" if row.released else "expired"
    return (
        f"attempt by {row.holder} (fence {row.fence}) {how} without an outcome; it may have "
        f"applied: reconcile, then resolve"
    )


def acquire(
    row: KeyRow | None,
    gate: GateRow | None,
    action: Action,
    holder: str,
    ttl: float,
    now: float,
) -> tuple[Grant, Write]:
    """Judge key, intent and gate together: grant a fresh lease and intent, or say why not."""
    if row is not None:
        if row.state is State.COMPLETED:
            return Grant(
                Outcome.ALREADY_DONE, result=row.result, reason="already completed"
            ), NOTHING
        if row.state is State.UNCERTAIN:
            return Grant(Outcome.UNCERTAIN, reason=row.reason), NOTHING
        if attempt_live(row, now):
            reason = f"in flight: {row.holder} (fence {row.fence}) holds it"
            return Grant(Outcome.CONTENDED, reason=reason, blocked_until=row.expires_at), NOTHING
        safe = row.retry_safety is RetrySafety.SAFE and action.retry_safety is RetrySafety.SAFE
        if row.state is State.IN_FLIGHT and not safe:
            reason = _over_reason(row)
            return Grant(Outcome.UNCERTAIN, reason=reason), Write(
                key=replace(row, state=State.UNCERTAIN, reason=reason)
            )
    if gate is not None and gate_held(gate, now):
        reason = f"resource {action.resource!r} is held by {gate.holder} (fence {gate.fence})"
        return Grant(Outcome.CONTENDED, reason=reason, blocked_until=gate.expires_at), NOTHING
    fence = (gate.fence if gate is not None else 0) + 1
    expires_at = now + ttl
    lease = Lease(action.key, action.resource, fence, holder, expires_at)
    new_row = KeyRow(
        action.key, State.IN_FLIGHT, action.resource, fence, holder, expires_at, action.retry_safety
    )
    new_gate = GateRow(action.resource, fence, action.key, holder, expires_at)
    return Grant(Outcome.GRANTED, lease=lease), Write(new_row, new_gate)


def _own_intent(row: KeyRow | None, lease: Lease) -> KeyRow:
    """The key row, if this lease's attempt is still the one that holds the intent."""
    if row is None or row.fence != lease.fence or row.resource != lease.resource:
        raise StaleLeaseError(
            f"lease fence {lease.fence} for key {lease.key!r} is not the current attempt"
        )
    if row.holder != lease.holder:
        raise StaleLeaseError(f"fence {lease.fence} was issued to {row.holder}, not {lease.holder}")
    return row


def _holding(
    row: KeyRow | None, gate: GateRow | None, lease: Lease, now: float
) -> tuple[KeyRow, GateRow]:
    """Both rows, if this lease still holds the intent and the resource gate, unexpired."""
    own = _own_intent(row, lease)
    if own.state is not State.IN_FLIGHT:
        raise StaleLeaseError(f"key {lease.key!r} is {own.state.value}, not in flight")
    if own.released or gate is None or gate.fence != lease.fence or gate.key != lease.key:
        raise StaleLeaseError(
            f"the gate of {lease.resource!r} was released or changed hands (fence {lease.fence})"
        )
    if not live(gate.expires_at, now):
        raise LeaseExpiredError(f"lease fence {lease.fence} for key {lease.key!r} has expired")
    return own, gate


def _freed(gate: GateRow | None, lease: Lease) -> GateRow | None:
    """The gate released by this lease, or None when this lease no longer holds it."""
    if gate is None or gate.fence != lease.fence or gate.key != lease.key:
        return None
    return GateRow(gate.resource, gate.fence)


def renew(
    row: KeyRow | None, gate: GateRow | None, lease: Lease, ttl: float, now: float
) -> tuple[Lease, Write]:
    """Extend a held lease, keeping its fence. Refused once the gate changed or was released."""
    own, held = _holding(row, gate, lease, now)
    expires_at = now + ttl
    renewed = replace(lease, expires_at=expires_at)
    return renewed, Write(replace(own, expires_at=expires_at), replace(held, expires_at=expires_at))


def complete(
    row: KeyRow | None, gate: GateRow | None, lease: Lease, result: bytes, now: float
) -> Write:
    """Record the outcome and release the gate; only a live holder may record."""
    own, held = _holding(row, gate, lease, now)
    done = replace(own, state=State.COMPLETED, result=result, released=True, reason="")
    return Write(done, GateRow(held.resource, held.fence))


def release(row: KeyRow | None, gate: GateRow | None, lease: Lease, now: float) -> Write:
    """Release the resource gate only; the intent stays and the attempt is over."""
    own, held = _holding(row, gate, lease, now)
    return Write(replace(own, released=True), GateRow(held.resource, held.fence))


def abandon(
    row: KeyRow | None, gate: GateRow | None, lease: Lease, reason: str, now: float
) -> Write:
    """Withdraw this attempt's intent (it certainly did not apply) and release its gate."""
    own = _own_intent(row, lease)
    if own.state is not State.IN_FLIGHT:
        raise StaleLeaseError(f"key {lease.key!r} is {own.state.value}: nothing to abandon")
    withdrawn = replace(own, state=State.WITHDRAWN, released=True, reason=f"abandoned: {reason}")
    return Write(withdrawn, _freed(gate, lease))


def mark_uncertain(
    row: KeyRow | None, gate: GateRow | None, lease: Lease, reason: str, now: float
) -> Write:
    """Turn this attempt's intent uncertain and release its gate; idempotent per attempt."""
    own = _own_intent(row, lease)
    if own.state is State.UNCERTAIN:
        return Write(gate=_freed(gate, lease))
    if own.state is not State.IN_FLIGHT:
        raise StaleLeaseError(f"key {lease.key!r} is {own.state.value}: cannot turn uncertain")
    uncertain = replace(own, state=State.UNCERTAIN, released=True, reason=reason)
    return Write(uncertain, _freed(gate, lease))


def resolve(
    row: KeyRow | None, applied: bool, result: bytes | None, now: float
) -> tuple[Resolution, Write]:
    """Settle an uncertain key from downstream facts. First resolution wins; no fence is checked."""
    if row is None:
        return Resolution(False, None, "unknown key: nothing to resolve"), NOTHING
    if not (
        row.state is State.UNCERTAIN
        or (row.state is State.IN_FLIGHT and not attempt_live(row, now))
    ):
        why = (
            "an attempt is still live"
            if row.state is State.IN_FLIGHT
            else f"it is {row.state.value}"
        )
        return Resolution(False, record_of(row, now), f"not resolvable: {why}"), NOTHING
    if applied:
        settled = replace(
            row, state=State.COMPLETED, result=result, released=True, reason="resolved: applied"
        )
    else:
        settled = replace(row, state=State.WITHDRAWN, released=True, reason="resolved: not applied")
    return Resolution(True, record_of(settled, now), settled.reason), Write(key=settled)
