"""sideeffect runner: `execute_with` runs one action through a store, at most once.

Contract (acquire → prepare → check → apply → complete):
- Not granted ⇒ nothing runs; the acquire's outcome (ALREADY_DONE with the recorded result,
  CONTENDED, UNCERTAIN) is returned as is.
- `prepare(lease)` does everything that is safe to throw away. Then eligibility is checked by
  renewing the lease: if the gate changed hands, was released or expired, `apply` never runs
  (LEASE_LOST) — a refused `complete` afterwards could not undo an effect already applied.
- `apply(lease)` performs the effect and returns the result as bytes; it should hand `lease` to a
  `FencedSink` so a late write is refused downstream. It must finish within the ttl or renew.
- `apply` fails and the failure's kind is resend-safe (toolfail: refused before it ran) ⇒ FAILED:
  the intent is abandoned, nothing recorded, the gate released. The same for an action declared
  `SAFE`, whatever the failure (the downstream deduplicates by key).
- `apply` fails in a way that cannot tell whether the remote side acted (timeout, connection lost,
  cancellation, anything unclassified) ⇒ UNCERTAIN: the key is marked uncertain and refuses to run
  again until `resolve_uncertain`. Cancellation is re-raised after the bookkeeping.
- `apply` succeeds but the store refuses or fails to record ⇒ UNRECORDED with the result: the
  effect happened; the key is marked uncertain (or stays in flight and turns uncertain at expiry)
  — except for a `SAFE` action, whose intent is withdrawn so that a retry (deduplicated
  downstream) records it. `Execution.needs_reconciliation` says which.
Bookkeeping after `apply` starts runs shielded from cancellation. Failures of the bookkeeping
itself are said in the reason, never swallowed silently. A `StoreError` from the acquire itself
propagates: nothing ran. A `StaleFenceError` escaping `apply` is judged like any unclassified
failure (UNCERTAIN): the runner cannot know whether `apply` wrote anything before the refusal.
"""

from __future__ import annotations

import os
import socket
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import anyio

from yagent.kernel.durable.sideeffect.errors import (
    InvalidArgumentError,
    LeaseError,
    SideEffectError,
)
from yagent.kernel.durable.sideeffect.store import Store
from yagent.kernel.durable.sideeffect.types import Action, Lease, Outcome, RetrySafety
from yagent.kernel.judge import toolfail

Apply = Callable[[Lease], Awaitable[bytes]]
Prepare = Callable[[Lease], Awaitable[None]]
Classifier = Callable[[BaseException], toolfail.Kind]

DEFAULT_TTL = 60.0


def default_holder() -> str:
    """A holder name unique to this process and call site: host, pid and a random suffix."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:12]}"


@dataclass(frozen=True, slots=True)
class Execution:
    """What `execute_with` came to. `error` is the exception behind a non-success, if any."""

    outcome: Outcome
    result: bytes | None = None
    lease: Lease | None = None
    reason: str = ""
    kind: toolfail.Kind | None = None
    error: BaseException | None = field(default=None, compare=False)
    needs_reconciliation: bool = False
    """The key refuses to run again until someone finds out whether the effect happened."""


async def _settle(op: Callable[[Lease, str], Awaitable[None]], lease: Lease, reason: str) -> str:
    """Run a bookkeeping step shielded from cancellation; a failure comes back as a note."""
    try:
        with anyio.CancelScope(shield=True):
            await op(lease, reason)
    except SideEffectError as exc:
        return (
            f"; bookkeeping failed ({type(exc).__name__}: {exc}): the intent stays and needs "
            f"reconciliation once the lease expires"
        )
    return ""


async def _failed_apply(
    store: Store, action: Action, lease: Lease, exc: BaseException, classify: Classifier
) -> Execution:
    kind = classify(exc)
    if toolfail.resend_safe(kind):
        note = await _settle(store.abandon, lease, f"apply failed ({kind.value}): {exc!r}")
        reason = f"apply failed ({kind.value}) before anything applied{note}"
        outcome = Outcome.FAILED
    elif action.retry_safety is RetrySafety.SAFE:
        note = await _settle(store.abandon, lease, f"retry-safe apply failed ({kind.value})")
        reason = (
            f"apply failed ({kind.value}) and may have applied; the action is declared "
            f"retry-safe, so the key stays executable{note}"
        )
        outcome = Outcome.FAILED
    else:
        why = f"apply failed ({kind.value}) and may have applied: {exc!r}"
        note = await _settle(store.mark_uncertain, lease, why)
        reason = f"{why}; reconcile, then resolve_uncertain{note}"
        outcome = Outcome.UNCERTAIN
    if not isinstance(exc, Exception):
        raise exc
    reconcile = outcome is Outcome.UNCERTAIN
    return Execution(
        outcome, lease=lease, reason=reason, kind=kind, error=exc, needs_reconciliation=reconcile
    )


async def _unrecorded(
    store: Store, action: Action, lease: Lease, why: str, result: bytes | None, error: Exception
) -> Execution:
    """The effect happened but is not recorded: uncertain, unless a retry is harmless."""
    if action.retry_safety is RetrySafety.SAFE:
        note = await _settle(store.abandon, lease, why)
        reason = f"{why}; the action is retry-safe: the key stays executable and a retry records it"
        reconcile = False
    else:
        note = await _settle(store.mark_uncertain, lease, why)
        reason = f"{why}; reconcile, then resolve_uncertain"
        reconcile = True
    return Execution(
        Outcome.UNRECORDED,
        result,
        lease,
        reason + note,
        None,
        error,
        needs_reconciliation=reconcile,
    )


async def _record(store: Store, action: Action, lease: Lease, result: object) -> Execution:
    if not isinstance(result, bytes):
        error = InvalidArgumentError(f"apply returned {type(result).__name__}, not bytes")
        why = f"applied, but unrecordable: {error}"
        return await _unrecorded(store, action, lease, why, None, error)
    try:
        with anyio.CancelScope(shield=True):
            await store.complete(lease, result)
    except SideEffectError as exc:
        why = f"applied, but the store did not record it ({type(exc).__name__}: {exc})"
        return await _unrecorded(store, action, lease, why, result, exc)
    return Execution(Outcome.APPLIED, result=result, lease=lease)


async def execute_with(
    store: Store,
    action: Action,
    prepare: Prepare | None,
    apply: Apply,
    *,
    holder: str | None = None,
    ttl: float = DEFAULT_TTL,
    classify: Classifier = toolfail.classify,
) -> Execution:
    """Run `action` at most once: see the module docstring for every path."""
    grant = await store.acquire(action, holder if holder is not None else default_holder(), ttl)
    if not grant.granted or grant.lease is None:
        reconcile = grant.outcome is Outcome.UNCERTAIN
        return Execution(
            grant.outcome, result=grant.result, reason=grant.reason, needs_reconciliation=reconcile
        )
    lease = grant.lease
    try:
        if prepare is not None:
            await prepare(lease)
        lease = await store.renew(lease, ttl)
    except LeaseError as exc:
        note = await _settle(store.abandon, lease, f"lease lost before apply: {exc}")
        return Execution(
            Outcome.LEASE_LOST,
            lease=lease,
            reason=f"lease lost before apply, nothing applied: {exc}{note}",
            error=exc,
        )
    except BaseException as exc:
        note = await _settle(store.abandon, lease, f"prepare failed: {exc!r}")
        if not isinstance(exc, Exception):
            raise
        return Execution(
            Outcome.FAILED,
            lease=lease,
            reason=f"prepare failed, nothing applied: {exc!r}{note}",
            kind=classify(exc),
            error=exc,
        )
    try:
        result = await apply(lease)
    except BaseException as exc:
        return await _failed_apply(store, action, lease, exc, classify)
    return await _record(store, action, lease, result)


@dataclass(frozen=True, slots=True)
class Runner:
    """`execute_with` bound to one store, holder name, ttl and failure classifier."""

    store: Store
    holder: str = field(default_factory=default_holder)
    ttl: float = DEFAULT_TTL
    classify: Classifier = toolfail.classify

    async def execute(
        self, action: Action, apply: Apply, *, prepare: Prepare | None = None
    ) -> Execution:
        return await execute_with(
            self.store,
            action,
            prepare,
            apply,
            holder=self.holder,
            ttl=self.ttl,
            classify=self.classify,
        )
