"""commitgate values and errors: holdings, commits, the injected terminal vocabulary.

Contract: a `Holding` is the right to commit the terminal state of one (run, step) until
`expires_at`; its `token` is minted by the gate, unique per acquisition, and is the only thing
that commits, renews or releases it. A `Commit` is final. Contention is an outcome of `acquire`
(`Acquired.outcome`), never an exception; exceptions are for a token that no longer holds what it
claims (`TokenError`), a state outside the vocabulary (`NotTerminalError`), invalid arguments and
backend failures (`StoreError`: nothing changed).
"""

from __future__ import annotations

import enum
import math
from collections.abc import Iterable
from dataclasses import dataclass

from yagent.kernel.durable.clock import Clock as Clock
from yagent.kernel.durable.clock import SystemClock as SystemClock


class CommitGateError(Exception):
    """Root of every commitgate error."""


class InvalidArgumentError(CommitGateError, ValueError):
    """An argument that can never be valid (empty id, non-positive ttl, empty vocabulary)."""


class NotTerminalError(CommitGateError, ValueError):
    """The state to commit is not in the host's terminal vocabulary."""


class TokenError(CommitGateError):
    """The token does not entitle its bearer to the operation."""


class StaleTokenError(TokenError):
    """The token holds nothing: released, committed, taken over after expiry, or never issued."""


class LeaseExpiredError(TokenError):
    """The token is still the latest holding, but its time ran out: it holds nothing."""


class StoreError(CommitGateError):
    """The backend could not run the operation; nothing is known to have changed."""


class Outcome(enum.StrEnum):
    GRANTED = "granted"  # the caller holds the gate: `holding` is set
    HELD = "held"  # another live holding exists: `held_by`, `held_until` are set
    COMMITTED = "committed"  # the terminal state is already committed: `commit` is set


@dataclass(frozen=True, slots=True)
class Holding:
    run_id: str
    step_id: str
    token: str
    holder: str
    expires_at: float


@dataclass(frozen=True, slots=True)
class Commit:
    run_id: str
    step_id: str
    state: str
    holder: str
    committed_at: float
    detail: str = ""


@dataclass(frozen=True, slots=True)
class Acquired:
    """The answer of `acquire`; see `Outcome` for which field goes with which outcome."""

    outcome: Outcome
    holding: Holding | None = None
    commit: Commit | None = None
    held_by: str | None = None
    held_until: float | None = None

    @property
    def granted(self) -> bool:
        return self.outcome is Outcome.GRANTED


def require_text(what: str, value: object) -> str:
    if not isinstance(value, str) or not value:
        raise InvalidArgumentError(f"commitgate: {what} must be a non-empty string, got {value!r}")
    return value


def require_ttl(ttl: object) -> float:
    if isinstance(ttl, bool) or not isinstance(ttl, int | float) or not math.isfinite(ttl):
        raise InvalidArgumentError(f"commitgate: ttl must be a finite number, got {ttl!r}")
    if ttl <= 0:
        raise InvalidArgumentError(f"commitgate: ttl must be positive, got {ttl!r}")
    return float(ttl)


def vocabulary(terminal: Iterable[str]) -> frozenset[str]:
    """The host's terminal states; an empty vocabulary could commit nothing and is refused."""
    if isinstance(terminal, str):
        raise InvalidArgumentError("commitgate: terminal states must be a collection, not a str")
    states = frozenset(terminal)
    if not states:
        raise InvalidArgumentError("commitgate: the terminal vocabulary is empty")
    for state in states:
        require_text("terminal state", state)
    return states
