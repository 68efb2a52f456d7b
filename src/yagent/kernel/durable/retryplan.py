"""retryplan: what to do with a failed call — do not retry, resend as is, or replay by key.

Contract: `explain(kind, idempotency_key=...)` combines the two orthogonal facts of the toolfail
table — is another try worth it (`retryable`), and would sending the same request again apply
nothing twice (`resend_safe`) — into one of three paths:
- not retryable ⇒ NO_RETRY;
- retryable and resend-safe (the request was refused before it ran) ⇒ RESEND, unchanged;
- retryable but not resend-safe (it may already have acted: a timeout, a dropped connection) ⇒
  REPLAY through the idempotency key — i.e. run the same `sideeffect.Action` key again, so the
  store answers ALREADY_DONE, UNCERTAIN or a fresh grant instead of a blind second application;
  without a key there is no guessing: NO_RETRY.
A blank key counts as no key. The plan carries the reason, the backoff and whether a person is
needed, all read from the toolfail table (no second table here). `plan()` returns just the path.
The host owns the retry loop, the attempt count and the waiting.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from yagent.kernel.judge import toolfail


class Path(enum.StrEnum):
    NO_RETRY = "no_retry"
    RESEND = "resend"
    REPLAY = "replay"


@dataclass(frozen=True, slots=True)
class Plan:
    """A retry decision and why. `idempotency_key` is set only on the REPLAY path."""

    path: Path
    reason: str
    kind: toolfail.Kind
    backoff: toolfail.Backoff
    needs_human: bool
    idempotency_key: str | None = None

    @property
    def retries(self) -> bool:
        return self.path is not Path.NO_RETRY

    def delay(self, attempt: int) -> float:
        """Seconds to wait before retry number `attempt` (1-based); 0 when not retrying."""
        return self.backoff.delay(attempt) if self.retries else 0.0


def explain(kind: toolfail.Kind, *, idempotency_key: str | None) -> Plan:
    """The retry path for a failure of `kind`, with its reason (see the module contract)."""
    kind = toolfail.parse_kind(kind)  # a stray string is UNKNOWN: never retried
    rule = toolfail.rule(kind)
    key = idempotency_key.strip() if isinstance(idempotency_key, str) else ""

    def plan_of(path: Path, reason: str) -> Plan:
        replay_key = idempotency_key if path is Path.REPLAY else None
        return Plan(path, reason, kind, rule.backoff, rule.needs_human, replay_key)

    if not rule.retryable:
        return plan_of(Path.NO_RETRY, f"{kind.value} failures are not worth retrying")
    if rule.resend_safe:
        return plan_of(
            Path.RESEND, f"{kind.value}: the request was refused before it ran; resend it as is"
        )
    if key:
        return plan_of(
            Path.REPLAY,
            f"{kind.value}: the first attempt may have applied; replay through the idempotency "
            f"key so it cannot apply twice",
        )
    return plan_of(
        Path.NO_RETRY,
        f"{kind.value}: the first attempt may have applied and there is no idempotency key; "
        f"not guessing — confirm its effect before trying again",
    )


def plan(kind: toolfail.Kind, *, idempotency_key: str | None) -> Path:
    """Just the path of `explain`."""
    return explain(kind, idempotency_key=idempotency_key).path
