"""guardset assembly: revocation by swapping the whole set, and the set as one ring of the chain.

- Revocation replaces the whole `Set`; nothing edits a set in place, so "which guards are active"
  has one truth. `swap_func(mutate)` is compare-and-swap over `mutate(current)`: when another
  swap lands between the read and the commit, `mutate` runs again on the newer set, so concurrent
  revocations (threads or tasks) never lose an update ("a revocation revoked"). `mutate` must be a
  pure function of its argument: it may run more than once.
- The generation lives inside the installed set; `Assembly.generation` is its projection. Every
  commit stamps `previous + 1`, so generations are unique and monotonic per assembly.
- The installed set is never empty (a `Set` cannot be): "revoke all" is refused with
  `EmptySetError`, a breach rather than a downgrade.
- Subscribers are told after the commit, outside the lock. A subscriber that raises does not turn
  the committed swap into a failure: the error is kept on the `SwapRecord`, counted and logged.
  Notifications from concurrent swappers may arrive out of order; each carries its generation.
- `stage(source)` adapts a `Set` or an `Assembly`: the assembly's current set is read once at the
  start of each judgement, so an in-flight evaluation finishes on the set it started with and
  the chain never needs rewiring after a swap.
"""

from __future__ import annotations

import dataclasses
import itertools
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass

from yagent.kernel.judge import invoke
from yagent.kernel.judge.guardset.core import STAGE_NAME, GuardsetError, Outcome, Set

_log = logging.getLogger(__name__)

DEFAULT_MAX_ATTEMPTS = 10_000
"""How many lost races one `swap_func` tolerates before it gives up loudly (never silently)."""


class ContentionError(GuardsetError):
    """`swap_func` lost the compare-and-swap race too many times; nothing was committed."""


@dataclass(frozen=True, slots=True)
class SubscriberFailure:
    """A subscriber that raised while being told about a committed swap."""

    token: int
    error: Exception


@dataclass(frozen=True, slots=True)
class SwapRecord:
    """What one swap did. `changed` is False when `mutate` returned the current set itself."""

    old: Set
    new: Set
    changed: bool
    attempts: int
    subscriber_failures: tuple[SubscriberFailure, ...] = ()

    @property
    def generation(self) -> int:
        return self.new.generation


Subscriber = Callable[[SwapRecord], object]


class Assembly:
    """Holds the current guard set; swaps it atomically; tells subscribers."""

    __slots__ = ("_current", "_failures", "_lock", "_subscribers", "_tokens")

    def __init__(self, initial: Set) -> None:
        if not isinstance(initial, Set):
            raise GuardsetError("guardset.Assembly: the initial value must be a Set")
        self._lock = threading.Lock()
        self._current = initial
        self._subscribers: dict[int, Subscriber] = {}
        self._tokens = itertools.count(1)
        self._failures = 0

    def snapshot(self) -> Set:
        """The set installed now. It is immutable, so holding it is safe."""
        return self._current

    @property
    def generation(self) -> int:
        return self._current.generation

    @property
    def subscriber_failures(self) -> int:
        """How many subscriber calls raised, over the assembly's life."""
        return self._failures

    def swap(self, new: Set) -> SwapRecord:
        """Install `new` whatever is current. For read-modify-write use `swap_func`."""
        return self.swap_func(lambda _old: new)

    def swap_func(
        self, mutate: Callable[[Set], Set], *, max_attempts: int = DEFAULT_MAX_ATTEMPTS
    ) -> SwapRecord:
        """Compare-and-swap `mutate(current)` in; retry on the newer set when another swap won.

        Errors raised by `mutate` (including `EmptySetError` for "revoke all") propagate and
        nothing is committed.
        """
        if max_attempts < 1:
            raise ValueError("guardset.Assembly.swap_func: max_attempts must be at least 1")
        for attempt in range(1, max_attempts + 1):
            old = self._current
            new = mutate(old)
            if not isinstance(new, Set):
                raise GuardsetError(
                    f"guardset.Assembly.swap_func: mutate returned {type(new).__name__}, not a Set"
                )
            if new is old:
                return SwapRecord(old, old, changed=False, attempts=attempt)
            with self._lock:
                if self._current is not old:
                    continue
                committed = new.with_generation(old.generation + 1)
                self._current = committed
                subscribers = list(self._subscribers.items())
            record = SwapRecord(old, committed, changed=True, attempts=attempt)
            return self._notify(record, subscribers)
        raise ContentionError(
            f"guardset.Assembly.swap_func: lost the race {max_attempts} times; nothing committed"
        )

    def subscribe(self, fn: Subscriber) -> int:
        """Call `fn(record)` after every committed swap; returns a token for `unsubscribe`."""
        with self._lock:
            token = next(self._tokens)
            self._subscribers[token] = fn
        return token

    def unsubscribe(self, token: int) -> bool:
        """Stop notifying `token`'s subscriber; False when it was not subscribed."""
        with self._lock:
            return self._subscribers.pop(token, None) is not None

    def _notify(self, record: SwapRecord, subscribers: list[tuple[int, Subscriber]]) -> SwapRecord:
        failures: list[SubscriberFailure] = []
        for token, fn in subscribers:
            try:
                fn(record)
            except Exception as exc:  # the swap has landed; a listener cannot undo or fail it
                failures.append(SubscriberFailure(token, exc))
                _log.exception(
                    "guardset subscriber %d failed on generation %d", token, record.generation
                )
        if not failures:
            return record
        with self._lock:
            self._failures += len(failures)
        return dataclasses.replace(record, subscriber_failures=tuple(failures))


@dataclass(frozen=True, slots=True)
class GuardStage:
    """The whole guard set as one `invoke.Stage`."""

    source: Set | Assembly
    name: str = STAGE_NAME

    def current(self) -> Set:
        return self.source.snapshot() if isinstance(self.source, Assembly) else self.source

    async def evaluate(self, call: invoke.Call) -> Outcome:
        """The full merged outcome (every guard's verdict) on the set current at the start."""
        return await self.current().evaluate(call)

    async def judge(self, call: invoke.Call) -> invoke.Verdict:
        outcome = await self.evaluate(call)
        return dataclasses.replace(outcome.verdict, stage=self.name)


def stage(source: Set | Assembly, *, name: str = STAGE_NAME) -> GuardStage:
    """Adapt a set, or an assembly's current set, into one ring of an `invoke.Chain`."""
    if not isinstance(source, Set | Assembly):
        raise GuardsetError(f"guardset.stage: expected a Set or Assembly, got {type(source)}")
    return GuardStage(source, name)
