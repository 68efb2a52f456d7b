"""toolfail: the tool-failure classification, as one data table.

Contract:
- Every failure kind maps, in `TABLE`, to: retryable (is trying again worth it), backoff (initial,
  factor, cap), needs_human, resend_safe (would sending the same request again apply nothing twice)
  and the single model-facing guidance text. No caller decides these with its own `if`s.
- Retry value and resend safety are orthogonal: a timeout is worth retrying, but the server may
  already have acted, so resending it as-is is not safe (`retryplan` combines the two).
- Anything that cannot be classified is `Kind.UNKNOWN`, which is not retryable (fail closed).
- `classify()` maps exceptions (timeouts, connection errors, HTTP statuses, permission and
  validation errors, cancellation) onto kinds; it never raises. It does not import asyncio to
  recognise asyncio's cancellation: a process that never imported asyncio has none to classify.
"""

from __future__ import annotations

import enum
import errno
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType


class Kind(enum.StrEnum):
    """Failure kinds. The string values are stable: they travel in verdicts and logs."""

    TIMEOUT = "timeout"
    TRANSIENT = "transient"
    RATE_LIMITED = "rate_limited"
    OVERLOADED = "overloaded"
    INVALID_ARGS = "invalid_args"
    RUNTIME = "runtime"
    NOT_FOUND = "not_found"
    CONFLICT = "conflict"
    TOO_LARGE = "too_large"
    UNAUTHORIZED = "unauthorized"
    PERMISSION = "permission"
    NEEDS_APPROVAL = "needs_approval"
    NOT_LOADED = "not_loaded"
    FORBIDDEN = "forbidden"
    BUDGET = "budget"
    UNMANAGED = "unmanaged"
    CANCELLED = "cancelled"
    INTERNAL = "internal"
    UNKNOWN = "unknown"


@dataclass(frozen=True, slots=True)
class Backoff:
    """Exponential backoff: initial delay, growth factor and cap, all in seconds."""

    initial: float
    factor: float
    cap: float

    def delay(self, attempt: int) -> float:
        """Delay before retry number `attempt` (1-based); never above `cap`, never negative."""
        if attempt < 1 or self.initial <= 0:
            return 0.0
        return float(min(self.cap, self.initial * self.factor ** (attempt - 1)))


NO_BACKOFF = Backoff(0.0, 1.0, 0.0)


@dataclass(frozen=True, slots=True)
class FailureRule:
    """One row of the table: how a failure of one kind is handled."""

    retryable: bool
    backoff: Backoff
    needs_human: bool
    resend_safe: bool
    guidance: str


def _row(retry: bool, backoff: Backoff, human: bool, resend: bool, guidance: str) -> FailureRule:
    return FailureRule(retry, backoff, human, resend, guidance)


_QUICK = Backoff(0.5, 2.0, 8.0)
_SLOW = Backoff(2.0, 2.0, 60.0)

TABLE: Mapping[Kind, FailureRule] = MappingProxyType(
    {
        Kind.TIMEOUT: _row(
            True,
            _QUICK,
            False,
            False,
            "The call timed out. It may still have taken effect: check its effect before "
            "repeating it, or narrow the request.",
        ),
        Kind.TRANSIENT: _row(
            True,
            _QUICK,
            False,
            False,
            "A transient connection failure. Retry once; if it fails again, report it.",
        ),
        Kind.RATE_LIMITED: _row(
            True,
            _SLOW,
            False,
            True,
            "Rate limited: the request was refused before it ran. Wait, then retry unchanged.",
        ),
        Kind.OVERLOADED: _row(
            True,
            _SLOW,
            False,
            True,
            "The service is overloaded and refused the request. Wait, then retry unchanged.",
        ),
        Kind.INVALID_ARGS: _row(
            False,
            NO_BACKOFF,
            False,
            True,
            "The arguments were invalid. Fix them according to the tool's schema; do not resend "
            "the same arguments.",
        ),
        Kind.RUNTIME: _row(
            False,
            NO_BACKOFF,
            False,
            False,
            "The code ran and threw an error (the message says which, and where). Fix the code "
            "before running it again; the calls it made before the error did take effect.",
        ),
        Kind.NOT_FOUND: _row(
            False,
            NO_BACKOFF,
            False,
            True,
            "The target does not exist. Check the name or path before trying again.",
        ),
        Kind.CONFLICT: _row(
            False,
            NO_BACKOFF,
            False,
            False,
            "The target changed or is held by someone else. Re-read its current state first.",
        ),
        Kind.TOO_LARGE: _row(
            False,
            NO_BACKOFF,
            False,
            True,
            "The request or its result is too large. Ask for a smaller range or page.",
        ),
        Kind.UNAUTHORIZED: _row(
            False,
            NO_BACKOFF,
            True,
            True,
            "Authentication failed. Credentials must be fixed by a person; do not retry.",
        ),
        Kind.PERMISSION: _row(
            False,
            NO_BACKOFF,
            False,
            True,
            "A guard denied this call. Do not repeat it; choose another way or explain why it "
            "is needed.",
        ),
        Kind.NEEDS_APPROVAL: _row(
            False,
            NO_BACKOFF,
            True,
            True,
            "This call needs a person's approval before it can run.",
        ),
        Kind.NOT_LOADED: _row(
            True,
            NO_BACKOFF,
            False,
            True,
            "The tool's full schema was not loaded; it is loaded now. Call it again.",
        ),
        Kind.FORBIDDEN: _row(
            False,
            NO_BACKOFF,
            False,
            True,
            "Refused outright: no approval or retry changes this (the error says what was "
            "refused and why). Do not repeat the call; use a listed tool or another way.",
        ),
        Kind.BUDGET: _row(
            False,
            NO_BACKOFF,
            False,
            False,
            "A budget (time, calls, bytes or memory) was exhausted. Do less per call.",
        ),
        Kind.UNMANAGED: _row(
            False,
            NO_BACKOFF,
            True,
            True,
            "Refused: tool bindings without a judgement chain never run. This is a host "
            "configuration error.",
        ),
        Kind.CANCELLED: _row(
            False,
            NO_BACKOFF,
            False,
            False,
            "The call was cancelled before it finished; it may have partly taken effect.",
        ),
        Kind.INTERNAL: _row(
            False,
            NO_BACKOFF,
            True,
            False,
            "An internal error stopped this call (a guard or the tool itself failed). Report it; "
            "do not retry blindly.",
        ),
        Kind.UNKNOWN: _row(
            False,
            NO_BACKOFF,
            True,
            False,
            "The call failed for an unclassified reason. Do not retry blindly; report it.",
        ),
    }
)


def rule(kind: Kind) -> FailureRule:
    """The table row for `kind`."""
    return TABLE[kind]


def retryable(kind: Kind) -> bool:
    return TABLE[kind].retryable


def resend_safe(kind: Kind) -> bool:
    return TABLE[kind].resend_safe


def guidance(kind: Kind) -> str:
    """The one model-facing text for a kind; the only place such text is produced."""
    return TABLE[kind].guidance


def parse_kind(value: object) -> Kind:
    """A kind from its string value; anything unknown is `Kind.UNKNOWN` (fail closed)."""
    if isinstance(value, Kind):
        return value
    try:
        return Kind(str(value))
    except ValueError:
        return Kind.UNKNOWN


_STATUS: Mapping[int, Kind] = MappingProxyType(
    {
        400: Kind.INVALID_ARGS,
        401: Kind.UNAUTHORIZED,
        403: Kind.PERMISSION,
        404: Kind.NOT_FOUND,
        408: Kind.TIMEOUT,
        409: Kind.CONFLICT,
        412: Kind.CONFLICT,
        413: Kind.TOO_LARGE,
        422: Kind.INVALID_ARGS,
        429: Kind.RATE_LIMITED,
        502: Kind.TRANSIENT,
        503: Kind.OVERLOADED,
        504: Kind.TIMEOUT,
        529: Kind.OVERLOADED,
    }
)


def classify_status(status: int) -> Kind:
    """Kind of an HTTP status code. 2xx/3xx are not failures and classify as UNKNOWN."""
    if status in _STATUS:
        return _STATUS[status]
    if 500 <= status < 600:
        return Kind.TRANSIENT
    if 400 <= status < 500:
        return Kind.INVALID_ARGS
    return Kind.UNKNOWN


class ToolFailure(Exception):
    """An exception that carries its classification explicitly (it wins over every heuristic)."""

    def __init__(self, kind: Kind, message: str) -> None:
        super().__init__(message)
        self.kind = kind


def _status_of(exc: BaseException) -> int | None:
    for holder in (exc, getattr(exc, "response", None)):
        for attr in ("status_code", "status"):
            value = getattr(holder, attr, None)
            if isinstance(value, int) and not isinstance(value, bool) and 100 <= value < 600:
                return value
    return None


def _is_validation_error(exc: BaseException) -> bool:
    return any(cls.__name__ == "ValidationError" for cls in type(exc).__mro__)


def _cancelled(exc: BaseException) -> bool:
    """A person's interrupt, or asyncio's cancellation (see the module contract)."""
    asyncio = sys.modules.get("asyncio")
    return isinstance(exc, KeyboardInterrupt) or (
        asyncio is not None and isinstance(exc, asyncio.CancelledError)
    )


def classify(exc: BaseException) -> Kind:
    """Kind of an exception. Order: explicit carrier, cancellation, HTTP status, then types."""
    if isinstance(exc, ToolFailure):
        return exc.kind
    if _cancelled(exc):
        return Kind.CANCELLED
    status = _status_of(exc)
    if status is not None:
        return classify_status(status)
    simple: tuple[tuple[type[BaseException] | tuple[type[BaseException], ...], Kind], ...] = (
        (TimeoutError, Kind.TIMEOUT),
        (PermissionError, Kind.PERMISSION),
        (FileNotFoundError, Kind.NOT_FOUND),
        ((ConnectionError, BrokenPipeError), Kind.TRANSIENT),
        (MemoryError, Kind.BUDGET),
    )
    for types, kind in simple:
        if isinstance(exc, types):
            return kind
    if isinstance(exc, OSError) and exc.errno == errno.ENAMETOOLONG:
        return Kind.INVALID_ARGS  # a path no system takes: the caller's argument
    if _is_validation_error(exc) or isinstance(exc, TypeError | ValueError):
        return Kind.INVALID_ARGS
    name = type(exc).__name__.lower()
    if "timeout" in name:
        return Kind.TIMEOUT
    if "connect" in name:
        return Kind.TRANSIENT
    return Kind.UNKNOWN
