"""ticket: one-time, short-lived, purpose-bound authorisation tickets (in-process).

Guarantees:
- `issue(purpose, payload)` returns a Ticket whose id comes from the injected randomness source
  (`secrets.token_urlsafe` by default). If that source raises, returns something that is not a
  string of at least MIN_ID_CHARS characters, or repeats an id still remembered, issuing fails
  with RandomnessError — never a predictable or reused id.
- `consume(id, purpose)` returns the payload exactly once. Expiry and consumption are judged in
  the same place, under the same lock, with one clock reading: a ticket is expired when
  `now >= expires_at`, and an expired ticket is burned by the attempt (ExpiredError).
- A wrong purpose raises PurposeError and does NOT burn the ticket: the purpose is not a secret,
  so burning would let any confused or hostile caller holding the id destroy the legitimate use,
  while not burning grants nothing (the right purpose is still required).
- A second consume raises AlreadyConsumedError while the ticket's expiry is remembered (tombstones
  are bounded by capacity; a forgotten one degrades to UnknownTicketError — still a refusal).
- The space is bounded: `issue` purges expired tickets first and then refuses with FullError.
  Nothing live is ever evicted to make room.
- Time comes from the injected clock; all methods are thread-safe.
Leaves to the host: what the payload means, how the id travels, persistence (none: a restart
invalidates every ticket, which is the right default for tickets that live seconds).
"""

from __future__ import annotations

import secrets
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from yagent.kernel.durable.clock import Clock as Clock

P = TypeVar("P")

ID_BYTES = 32
MIN_ID_CHARS = 16


class TicketError(Exception):
    """Root of this module's errors."""


class FullError(TicketError):
    """Every slot holds a live ticket: issuing is refused, nothing is evicted."""


class RandomnessError(TicketError):
    """The randomness source failed or produced an unusable / repeated id."""


class RefusedError(TicketError):
    """A consume that returned no payload."""


class UnknownTicketError(RefusedError):
    """No such ticket (never issued, or forgotten)."""


class AlreadyConsumedError(RefusedError):
    """The ticket was used (or burned by expiry) already."""


class ExpiredError(RefusedError):
    """The ticket's time ran out before this consume; the attempt burned it."""


class PurposeError(RefusedError):
    """The ticket exists but was issued for another purpose; it stays usable."""


def _expired(expires_at: float, now: float) -> bool:
    """The one expiry rule (consumption and purge both use it): the last instant is excluded."""
    return now >= expires_at


@dataclass(frozen=True, slots=True)
class Ticket(Generic[P]):
    id: str
    purpose: str
    payload: P
    issued_at: float
    expires_at: float


class Tickets(Generic[P]):
    """An in-memory ticket space of `capacity` live tickets, each living `ttl` seconds."""

    def __init__(
        self,
        clock: Clock,
        ttl: float,
        capacity: int,
        rng: Callable[[int], str] = secrets.token_urlsafe,
    ) -> None:
        if not ttl > 0:
            raise ValueError("ttl must be positive")
        if capacity < 1:
            raise ValueError("capacity must be at least 1")
        self._clock = clock
        self._ttl = float(ttl)
        self._capacity = capacity
        self._rng = rng
        self._live: dict[str, Ticket[P]] = {}
        self._burned: OrderedDict[str, float] = OrderedDict()  # id -> expires_at
        self._lock = threading.Lock()

    def __len__(self) -> int:
        with self._lock:
            return len(self._live)

    def issue(self, purpose: str, payload: P) -> Ticket[P]:
        if not isinstance(purpose, str) or not purpose:
            raise ValueError("purpose must be a non-empty string")
        with self._lock:
            now = self._clock.now()
            if len(self._live) >= self._capacity:
                self._purge(now)
                if len(self._live) >= self._capacity:
                    raise FullError(f"{self._capacity} live tickets: refusing to issue")
            ticket_id = self._new_id()
            ticket = Ticket(ticket_id, purpose, payload, now, now + self._ttl)
            self._live[ticket_id] = ticket
            return ticket

    def consume(self, ticket_id: str, purpose: str) -> P:
        """The payload, once; expiry and consumption judged here together."""
        with self._lock:
            now = self._clock.now()
            ticket = self._live.get(ticket_id)
            if ticket is None:
                if ticket_id in self._burned:
                    raise AlreadyConsumedError("ticket already used")
                raise UnknownTicketError("no such ticket")
            if _expired(ticket.expires_at, now):
                self._burn(ticket)
                raise ExpiredError("ticket expired")
            if ticket.purpose != purpose:
                raise PurposeError("ticket was issued for another purpose")
            self._burn(ticket)
            return ticket.payload

    def purge(self) -> int:
        """Drop expired tickets now; returns how many live tickets were dropped."""
        with self._lock:
            return self._purge(self._clock.now())

    def _new_id(self) -> str:
        try:
            ticket_id: Any = self._rng(ID_BYTES)
        except Exception as exc:
            raise RandomnessError(f"randomness source failed: {type(exc).__name__}") from exc
        if not isinstance(ticket_id, str) or len(ticket_id) < MIN_ID_CHARS:
            raise RandomnessError("randomness source returned an unusable id")
        if ticket_id in self._live or ticket_id in self._burned:
            raise RandomnessError("randomness source repeated an id")
        return ticket_id

    def _burn(self, ticket: Ticket[P]) -> None:
        del self._live[ticket.id]
        self._burned[ticket.id] = ticket.expires_at
        while len(self._burned) > self._capacity:
            self._burned.popitem(last=False)

    def _purge(self, now: float) -> int:
        expired = [t for t in self._live.values() if _expired(t.expires_at, now)]
        for t in expired:
            del self._live[t.id]
        for tid in [tid for tid, exp in self._burned.items() if _expired(exp, now)]:
            del self._burned[tid]
        return len(expired)
