"""taskboard boards: the `Board` protocol, `RowBoard` (its shared body) and the memory board.

Contract of a `Board` (every operation atomic; expiry judged by the board's clock inside it):
- `post(task_id, depends_on, payload)` adds an OPEN task; a duplicate id or a dependency the board
  does not hold is refused (so posting can never create a cycle).
- `claim(task_id, owner, ClaimRequest(ttl))` is atomic: of any number of concurrent claims of one
  task exactly one wins. The winner gets the task back with a `Lease` whose token the board
  minted; the others get a `ClaimError`.
- `release(token)` (back to OPEN), `complete(token, result)` (DONE) and `fail(token, reason)`
  (FAILED, claimable again) act only on the live claim the token names: by token, never by owner
  name or content. `renew(token, request)` extends that claim and keeps its token.
- `cancel(task_id)` ends an unclaimed task for good; `get`, `snapshot` read.
A `ClockedBoard` also takes an injected clock and `seed(tasks)`, which replaces the board's
content with a snapshot that passes `check` — the contract suite (`boardtest`) needs both.
"""

from __future__ import annotations

import abc
import secrets
import threading
from collections.abc import Callable, Iterable, Sequence
from typing import Protocol, TypeVar, runtime_checkable

from yagent.kernel.durable.taskboard import rules
from yagent.kernel.durable.taskboard.check import check
from yagent.kernel.durable.taskboard.lifecycle import Event
from yagent.kernel.durable.taskboard.types import (
    BoardState,
    ClaimRequest,
    Clock,
    DuplicateTaskError,
    InvalidArgumentError,
    InvariantError,
    NotFoundError,
    Status,
    SystemClock,
    Task,
    UnknownDependencyError,
    require_ids,
    require_text,
)

T = TypeVar("T")


@runtime_checkable
class Board(Protocol):
    """Storage-neutral coordination of delegated tasks (see the module docstring)."""

    async def post(
        self, task_id: str, depends_on: Iterable[str] = (), payload: str = ""
    ) -> Task: ...

    async def claim(self, task_id: str, owner: str, request: ClaimRequest) -> Task: ...

    async def renew(self, token: str, request: ClaimRequest) -> Task: ...

    async def release(self, token: str) -> Task: ...

    async def complete(self, token: str, result: str = "") -> Task: ...

    async def fail(self, token: str, reason: str = "") -> Task: ...

    async def cancel(self, task_id: str) -> Task: ...

    async def get(self, task_id: str) -> Task | None: ...

    async def snapshot(self) -> BoardState: ...


@runtime_checkable
class ClockedBoard(Board, Protocol):
    def set_clock(self, clock: Clock) -> None: ...

    async def seed(self, tasks: Iterable[Task]) -> None: ...


class Tx(Protocol):
    def task(self, task_id: str) -> Task | None: ...

    def by_token(self, token: str) -> Task | None: ...

    def tasks(self) -> Sequence[Task]:
        """Every task, in the order first posted."""
        ...

    def put(self, task: Task) -> None:
        """Insert a new task at the end, or update one in place."""
        ...

    def clear(self) -> None: ...


def mint_token() -> str:
    """128 random bits: unique across processes without coordination."""
    return secrets.token_hex(16)


def _request(value: object) -> ClaimRequest:
    if not isinstance(value, ClaimRequest):
        raise InvalidArgumentError(f"taskboard: expected a ClaimRequest, got {value!r}")
    return value


def _text(what: str, value: object) -> str:
    if not isinstance(value, str):
        raise InvalidArgumentError(f"taskboard: {what} must be a string, got {value!r}")
    return value


class RowBoard(abc.ABC):
    """A `ClockedBoard` over `rules`; subclasses supply one atomic transaction."""

    def __init__(self, clock: Clock | None = None) -> None:
        self._clock: Clock = clock if clock is not None else SystemClock()

    def set_clock(self, clock: Clock) -> None:
        if not isinstance(clock, Clock):
            raise InvalidArgumentError("taskboard: clock must have a now() method")
        self._clock = clock

    @abc.abstractmethod
    async def _transact(self, fn: Callable[[Tx, float], T], *, write: bool) -> T:
        """Run `fn(tx, now)` atomically; `now` is read once the transaction holds its lock.
        When `fn` raises, nothing it wrote is kept."""

    async def post(self, task_id: str, depends_on: Iterable[str] = (), payload: str = "") -> Task:
        new = Task(
            require_text("task id", task_id),
            Status.OPEN,
            require_ids("depends_on", depends_on),
            _text("payload", payload),
        )

        def op(tx: Tx, now: float) -> Task:
            if tx.task(new.id) is not None:
                raise DuplicateTaskError(f"taskboard: task {new.id!r} already exists")
            missing = [d for d in new.depends_on if tx.task(d) is None]
            if missing:
                raise UnknownDependencyError(f"taskboard: {new.id!r} depends on unknown {missing}")
            tx.put(new)
            return new

        return await self._transact(op, write=True)

    async def claim(self, task_id: str, owner: str, request: ClaimRequest) -> Task:
        tid, who, ttl = (
            require_text("task id", task_id),
            require_text("owner", owner),
            _request(request).ttl,
        )
        token = mint_token()

        def op(tx: Tx, now: float) -> Task:
            task = tx.task(tid)
            if task is None:
                raise NotFoundError(f"taskboard: no task {tid!r}")
            deps = {d: tx.task(d) for d in task.depends_on}
            claimed = rules.claim(task, deps, who, ttl, now, token)
            tx.put(claimed)
            return claimed

        return await self._transact(op, write=True)

    async def renew(self, token: str, request: ClaimRequest) -> Task:
        tok, ttl = require_text("token", token), _request(request).ttl
        return await self._by_token(tok, lambda task, now: rules.renew(task, tok, ttl, now))

    async def release(self, token: str) -> Task:
        tok = require_text("token", token)
        return await self._by_token(
            tok, lambda t, now: rules.settle(t, tok, Event.RELEASE, None, now)
        )

    async def complete(self, token: str, result: str = "") -> Task:
        tok, text = require_text("token", token), _text("result", result)
        return await self._by_token(
            tok, lambda t, now: rules.settle(t, tok, Event.COMPLETE, text, now)
        )

    async def fail(self, token: str, reason: str = "") -> Task:
        tok, text = require_text("token", token), _text("reason", reason)
        return await self._by_token(tok, lambda t, now: rules.settle(t, tok, Event.FAIL, text, now))

    async def _by_token(self, token: str, change: Callable[[Task | None, float], Task]) -> Task:
        def op(tx: Tx, now: float) -> Task:
            new = change(tx.by_token(token), now)
            tx.put(new)
            return new

        return await self._transact(op, write=True)

    async def cancel(self, task_id: str) -> Task:
        tid = require_text("task id", task_id)

        def op(tx: Tx, now: float) -> Task:
            task = tx.task(tid)
            if task is None:
                raise NotFoundError(f"taskboard: no task {tid!r}")
            new = rules.cancel(task, now)
            tx.put(new)
            return new

        return await self._transact(op, write=True)

    async def get(self, task_id: str) -> Task | None:
        tid = require_text("task id", task_id)
        return await self._transact(lambda tx, now: tx.task(tid), write=False)

    async def snapshot(self) -> BoardState:
        return await self._transact(lambda tx, now: BoardState(tuple(tx.tasks()), now), write=False)

    async def seed(self, tasks: Iterable[Task]) -> None:
        """Replace the whole board with `tasks` (in order); refuses a snapshot `check` rejects."""
        given = tuple(tasks)
        if not all(isinstance(t, Task) for t in given):
            raise InvalidArgumentError("taskboard: seed takes Task values")
        violations = check(BoardState(given, 0.0))
        if violations:
            raise InvariantError(f"taskboard: seed breaks invariants: {list(violations)}")

        def op(tx: Tx, now: float) -> None:
            tx.clear()
            for task in given:
                tx.put(task)

        await self._transact(op, write=True)


class _MemoryTx:
    """Reads see committed tasks plus this transaction's writes; writes land only on commit."""

    __slots__ = ("_cleared", "_committed", "_writes")

    def __init__(self, committed: dict[str, Task]) -> None:
        self._committed = committed
        self._writes: dict[str, Task] = {}
        self._cleared = False

    def task(self, task_id: str) -> Task | None:
        if task_id in self._writes:
            return self._writes[task_id]
        return None if self._cleared else self._committed.get(task_id)

    def by_token(self, token: str) -> Task | None:
        return next(
            (t for t in self.tasks() if t.lease is not None and t.lease.token == token), None
        )

    def tasks(self) -> Sequence[Task]:
        base = {} if self._cleared else dict(self._committed)
        base.update(self._writes)
        return list(base.values())

    def put(self, task: Task) -> None:
        self._writes[task.id] = task

    def clear(self) -> None:
        self._cleared = True
        self._writes.clear()

    def commit(self) -> None:
        if self._cleared:
            self._committed.clear()
        self._committed.update(self._writes)


class MemoryBoard(RowBoard):
    """The in-process reference board: tasks in a dict behind one lock; nothing survives."""

    def __init__(self, clock: Clock | None = None) -> None:
        super().__init__(clock)
        self._lock = threading.Lock()
        self._tasks: dict[str, Task] = {}

    async def _transact(self, fn: Callable[[Tx, float], T], *, write: bool) -> T:
        with self._lock:
            tx = _MemoryTx(self._tasks)
            result = fn(tx, self._clock.now())
            if write:
                tx.commit()
            return result
