"""commitgate gates: the `Gate` protocol, `RowGate` (its shared body) and the in-memory gate.

Contract of a `Gate` (every operation atomic; expiry judged by the gate's clock inside it):
- `acquire(run_id, step_id, holder, ttl)`: COMMITTED when the terminal state is already
  committed, HELD while another holding is live, otherwise GRANTED with a fresh token minted by
  the gate — unique per acquisition even for the same holder name and the same step.
- `commit(token, state)`: only the current, live token may commit, only a state of the host's
  terminal vocabulary, and only once; the holding ends with the commit.
- `release_lease(token)`: ends exactly the holding `token` names and returns True; a token that
  holds nothing (released, committed, taken over) frees nothing and returns False — so a late
  release can never free a gate someone else now holds.
- `renew(token, ttl)`: extends a live holding, same token. `committed(run_id, step_id)` reads.
A `ClockedGate` takes an injected clock (`set_clock`), which the contract suite needs.
"""

from __future__ import annotations

import abc
import secrets
import threading
from collections.abc import Callable, Iterable
from typing import Protocol, TypeVar, runtime_checkable

from yagent.kernel.durable.commitgate import rules
from yagent.kernel.durable.commitgate.types import (
    Acquired,
    Clock,
    Commit,
    Holding,
    InvalidArgumentError,
    SystemClock,
    require_text,
    require_ttl,
    vocabulary,
)

T = TypeVar("T")


@runtime_checkable
class Gate(Protocol):
    """Exclusive commit of a (run, step) terminal state (see the module docstring)."""

    @property
    def terminal(self) -> frozenset[str]: ...

    async def acquire(self, run_id: str, step_id: str, holder: str, ttl: float) -> Acquired: ...

    async def renew(self, token: str, ttl: float) -> Holding: ...

    async def commit(self, token: str, state: str, detail: str = "") -> Commit: ...

    async def release_lease(self, token: str) -> bool: ...

    async def committed(self, run_id: str, step_id: str) -> Commit | None: ...


@runtime_checkable
class ClockedGate(Gate, Protocol):
    def set_clock(self, clock: Clock) -> None: ...


class Tx(Protocol):
    def row(self, run_id: str, step_id: str) -> rules.GateRow | None: ...

    def by_token(self, token: str) -> rules.GateRow | None: ...


Op = Callable[[Tx, float], tuple[T, "rules.GateRow | None"]]


def mint_token() -> str:
    """128 random bits: unique across processes without coordination."""
    return secrets.token_hex(16)


class RowGate(abc.ABC):
    """A `ClockedGate` over `rules`; subclasses supply one atomic transaction."""

    def __init__(self, terminal: Iterable[str], clock: Clock | None = None) -> None:
        self._terminal = vocabulary(terminal)
        self._clock: Clock = clock if clock is not None else SystemClock()

    @property
    def terminal(self) -> frozenset[str]:
        return self._terminal

    def set_clock(self, clock: Clock) -> None:
        if not isinstance(clock, Clock):
            raise InvalidArgumentError("commitgate: clock must have a now() method")
        self._clock = clock

    @abc.abstractmethod
    async def _transact(self, fn: Op[T], *, write: bool) -> T:
        """Run `fn(tx, now)` atomically and write the row it returns (if any); `now` is read
        once the transaction holds its lock. When `fn` raises, nothing is written."""

    async def acquire(self, run_id: str, step_id: str, holder: str, ttl: float) -> Acquired:
        run, step = require_text("run id", run_id), require_text("step id", step_id)
        who, span = require_text("holder", holder), require_ttl(ttl)
        token = mint_token()

        def op(tx: Tx, now: float) -> tuple[Acquired, rules.GateRow | None]:
            return rules.acquire(tx.row(run, step), run, step, who, span, now, token)

        return await self._transact(op, write=True)

    async def renew(self, token: str, ttl: float) -> Holding:
        tok, span = require_text("token", token), require_ttl(ttl)

        def op(tx: Tx, now: float) -> tuple[Holding, rules.GateRow | None]:
            return rules.renew(tx.by_token(tok), tok, span, now)

        return await self._transact(op, write=True)

    async def commit(self, token: str, state: str, detail: str = "") -> Commit:
        tok, what = require_text("token", token), require_text("state", state)
        if not isinstance(detail, str):
            raise InvalidArgumentError("commitgate: detail must be a string")

        def op(tx: Tx, now: float) -> tuple[Commit, rules.GateRow | None]:
            return rules.commit(tx.by_token(tok), tok, what, detail, self._terminal, now)

        return await self._transact(op, write=True)

    async def release_lease(self, token: str) -> bool:
        tok = require_text("token", token)

        def op(tx: Tx, now: float) -> tuple[bool, rules.GateRow | None]:
            new = rules.release(tx.by_token(tok), tok)
            return new is not None, new

        return await self._transact(op, write=True)

    async def committed(self, run_id: str, step_id: str) -> Commit | None:
        run, step = require_text("run id", run_id), require_text("step id", step_id)

        def op(tx: Tx, now: float) -> tuple[Commit | None, rules.GateRow | None]:
            row = tx.row(run, step)
            return (None if row is None else row.commit()), None

        return await self._transact(op, write=False)


class _MemoryTx:
    __slots__ = ("_rows", "_tokens")

    def __init__(
        self, rows: dict[tuple[str, str], rules.GateRow], tokens: dict[str, tuple[str, str]]
    ) -> None:
        self._rows = rows
        self._tokens = tokens

    def row(self, run_id: str, step_id: str) -> rules.GateRow | None:
        return self._rows.get((run_id, step_id))

    def by_token(self, token: str) -> rules.GateRow | None:
        where = self._tokens.get(token)
        return None if where is None else self._rows.get(where)


class MemoryGate(RowGate):
    """The in-process reference gate: rows in a dict behind one lock; nothing survives."""

    def __init__(self, terminal: Iterable[str], clock: Clock | None = None) -> None:
        super().__init__(terminal, clock)
        self._lock = threading.Lock()
        self._rows: dict[tuple[str, str], rules.GateRow] = {}
        self._tokens: dict[str, tuple[str, str]] = {}  # live index: token -> its row

    async def _transact(self, fn: Op[T], *, write: bool) -> T:
        with self._lock:
            result, new = fn(_MemoryTx(self._rows, self._tokens), self._clock.now())
            if write and new is not None:
                where = (new.run_id, new.step_id)
                old = self._rows.get(where)
                if old is not None and old.token is not None:
                    del self._tokens[old.token]
                if new.token is not None:
                    self._tokens[new.token] = where
                self._rows[where] = new
            return result
