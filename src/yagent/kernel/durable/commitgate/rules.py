"""commitgate rules: every gate's judgement, as pure functions over one row per (run, step).

Contract: a store reads the row, calls one function here with its `now` (and, for acquire, a
freshly minted token), and writes the returned row in the same atomic transaction. The functions
either return what to write (None: write nothing) or raise before anything is written; they read
no clock and do no I/O, so memory and SQLite gates cannot drift apart in what they decide.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from yagent.kernel.durable.commitgate.types import (
    Acquired,
    Commit,
    Holding,
    LeaseExpiredError,
    NotTerminalError,
    Outcome,
    StaleTokenError,
)


@dataclass(frozen=True, slots=True)
class GateRow:
    """One (run, step): its current holding (`token` None when free) and its commit, if any."""

    run_id: str
    step_id: str
    token: str | None = None
    holder: str = ""
    expires_at: float = 0.0
    state: str | None = None
    committed_by: str = ""
    committed_at: float = 0.0
    detail: str = ""

    def holding(self) -> Holding:
        if self.token is None:
            raise StaleTokenError(f"commitgate: {self.run_id}/{self.step_id} is not held")
        return Holding(self.run_id, self.step_id, self.token, self.holder, self.expires_at)

    def commit(self) -> Commit | None:
        if self.state is None:
            return None
        return Commit(
            self.run_id, self.step_id, self.state, self.committed_by, self.committed_at, self.detail
        )


def acquire(
    row: GateRow | None,
    run_id: str,
    step_id: str,
    holder: str,
    ttl: float,
    now: float,
    token: str,
) -> tuple[Acquired, GateRow | None]:
    """committed > live holding > grant (a free gate or an expired holding)."""
    if row is not None:
        done = row.commit()
        if done is not None:
            return Acquired(Outcome.COMMITTED, commit=done), None
        if row.token is not None and row.expires_at > now:
            return Acquired(Outcome.HELD, held_by=row.holder, held_until=row.expires_at), None
    base = row if row is not None else GateRow(run_id, step_id)
    new = replace(base, token=token, holder=holder, expires_at=now + ttl)
    return Acquired(Outcome.GRANTED, holding=new.holding()), new


def _held(row: GateRow | None, token: str, now: float) -> GateRow:
    """The row `token` currently and validly holds."""
    if row is None or row.token != token:
        if row is not None and row.state is not None:
            raise StaleTokenError(
                f"commitgate: {row.run_id}/{row.step_id} is already committed as {row.state!r}"
            )
        raise StaleTokenError("commitgate: the token holds nothing (released, taken over, unknown)")
    if row.expires_at <= now:
        raise LeaseExpiredError(
            f"commitgate: the holding of {row.run_id}/{row.step_id} by {row.holder} expired"
        )
    return row


def commit(
    row: GateRow | None,
    token: str,
    state: str,
    detail: str,
    terminal: frozenset[str],
    now: float,
) -> tuple[Commit, GateRow]:
    """Commit `state` once, with the current live token; the holding ends with it."""
    if state not in terminal:
        raise NotTerminalError(
            f"commitgate: {state!r} is not a terminal state (terminal: {sorted(terminal)})"
        )
    held = _held(row, token, now)
    new = replace(
        held,
        token=None,
        state=state,
        committed_by=held.holder,
        committed_at=now,
        detail=detail,
    )
    return Commit(held.run_id, held.step_id, state, held.holder, now, detail), new


def renew(row: GateRow | None, token: str, ttl: float, now: float) -> tuple[Holding, GateRow]:
    """Extend the live holding of `token`; the token stays the same."""
    held = _held(row, token, now)
    new = replace(held, expires_at=now + ttl)
    return new.holding(), new


def release(row: GateRow | None, token: str) -> GateRow | None:
    """End the holding of exactly `token`; None (write nothing) when it holds nothing.

    An expired holding that nobody took over is still released: that frees no one else.
    """
    if row is None or row.token != token:
        return None
    return replace(row, token=None, holder="", expires_at=0.0)
