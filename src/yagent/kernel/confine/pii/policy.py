"""pii runtime policy: what each surface does, swapped as one object, with subscriptions.

Guarantees:
- `Policy` is one immutable value: an Action per Surface (off / mask / block), the masking
  Strength and the kinds detected. The default masks everything on every surface at FULL
  strength (the strict side); the host loosens it explicitly.
- `PolicyStore` holds one `PolicyGeneration` (a policy and its generation) behind one reference: a
  reader sees a whole policy, never half of two. Every swap gets a unique, strictly increasing
  generation; `swap_func` is a compare-and-swap loop, so concurrent editors lose no update.
- Subscribers are told after a swap has landed, with (previous, current) generations, in increasing
  generation order (deliveries are serialised; a burst of swaps may be coalesced into one
  notification of the latest). A raising subscriber does not undo the swap and does not stop the
  others: its error is returned in `Swapped.failures`. A subscriber may not swap from inside its
  callback (ReentrantSwapError) — that would reorder notifications.
"""

from __future__ import annotations

import enum
import itertools
import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from yagent.kernel.confine.pii.detect import ALL_KINDS, Kind, Strength


class PiiError(Exception):
    """Root of this package's errors."""


class PolicyError(PiiError, ValueError):
    """A policy value or surface that is not understood."""


class StaleGenerationError(PiiError):
    """compare_and_swap was given a generation that is no longer current."""


class ReentrantSwapError(PiiError):
    """A subscriber tried to swap the policy from inside its own notification."""


class Surface(enum.StrEnum):
    MODEL = "model"
    LOG = "log"
    DISPLAY = "display"


class Action(enum.StrEnum):
    OFF = "off"
    MASK = "mask"
    BLOCK = "block"


def _enum(kind: type[enum.StrEnum], value: object, what: str) -> enum.StrEnum:
    if type(value) is kind:  # a member already: the common case, judged once per event
        return value
    if not isinstance(value, str):
        raise PolicyError(f"{what} must be a {kind.__name__}, got {value!r}")
    try:
        return kind(value)
    except ValueError as exc:
        raise PolicyError(f"unknown {what} {value!r}") from exc


_FIELD = {surface: surface.value for surface in Surface}  # a member's `.value` is a slow lookup


@dataclass(frozen=True, slots=True)
class Policy:
    model: Action = Action.MASK
    log: Action = Action.MASK
    display: Action = Action.MASK
    strength: Strength = Strength.FULL
    kinds: frozenset[Kind] = field(default=ALL_KINDS)

    def __post_init__(self) -> None:
        for surface in Surface:
            object.__setattr__(
                self, surface.value, _enum(Action, getattr(self, surface.value), "action")
            )
        object.__setattr__(self, "strength", _enum(Strength, self.strength, "strength"))
        if isinstance(self.kinds, str):
            raise PolicyError("Policy.kinds is a set of kinds, not one string")
        object.__setattr__(self, "kinds", frozenset(_enum(Kind, k, "kind") for k in self.kinds))

    def action(self, surface: Surface) -> Action:
        action: Action = getattr(self, _FIELD[surface_of(surface)])
        return action

    def with_action(self, surface: Surface, action: Action) -> Policy:
        which = surface_of(surface)
        return replace(
            self,
            model=action if which is Surface.MODEL else self.model,
            log=action if which is Surface.LOG else self.log,
            display=action if which is Surface.DISPLAY else self.display,
        )


def surface_of(value: object) -> Surface:
    """The Surface named by `value`; anything else is refused (no default surface exists)."""
    surface = _enum(Surface, value, "surface")
    assert isinstance(surface, Surface)
    return surface


@dataclass(frozen=True, slots=True)
class PolicyGeneration:
    """The policy in force and the generation of the swap that installed it (0: the first)."""

    policy: Policy
    generation: int


Subscriber = Callable[[PolicyGeneration, PolicyGeneration], None]


@dataclass(frozen=True, slots=True)
class SubscriberFailure:
    token: int
    error: Exception


@dataclass(frozen=True, slots=True)
class Swapped:
    """A landed swap. `notified` is False when a later swap's delivery covered this one."""

    snapshot: PolicyGeneration
    previous: PolicyGeneration
    notified: bool
    failures: tuple[SubscriberFailure, ...] = ()


class PolicyStore:
    def __init__(self, policy: Policy | None = None) -> None:
        self._current = PolicyGeneration(policy or Policy(), 0)
        self._lock = threading.Lock()
        self._deliver_lock = threading.Lock()
        self._delivered = self._current
        self._subscribers: dict[int, Subscriber] = {}
        self._tokens = itertools.count(1)
        self._local = threading.local()

    def snapshot(self) -> PolicyGeneration:
        return self._current

    @property
    def generation(self) -> int:
        return self._current.generation

    def subscribe(self, subscriber: Subscriber) -> int:
        """Register for (previous, current) after each landed swap; returns a token."""
        with self._lock:
            token = next(self._tokens)
            self._subscribers[token] = subscriber
            return token

    def unsubscribe(self, token: int) -> bool:
        """Stop notifications for `token`; False if it was not subscribed."""
        with self._lock:
            return self._subscribers.pop(token, None) is not None

    def swap(self, policy: Policy) -> Swapped:
        """Replace the whole policy (not based on the current one)."""
        self._refuse_reentry()
        with self._lock:
            previous = self._current
            self._current = PolicyGeneration(policy, previous.generation + 1)
            landed = self._current
        return self._deliver(landed, previous)

    def compare_and_swap(self, expected_generation: int, policy: Policy) -> Swapped:
        self._refuse_reentry()
        with self._lock:
            previous = self._current
            if previous.generation != expected_generation:
                raise StaleGenerationError(
                    f"generation is {previous.generation}, expected {expected_generation}"
                )
            self._current = PolicyGeneration(policy, expected_generation + 1)
            landed = self._current
        return self._deliver(landed, previous)

    def swap_func(self, mutate: Callable[[Policy], Policy]) -> Swapped:
        """Read-modify-write on the current policy, retried until it lands on an unchanged base."""
        self._refuse_reentry()
        while True:
            base = self._current
            proposed = mutate(base.policy)
            with self._lock:
                if self._current is base:
                    self._current = PolicyGeneration(proposed, base.generation + 1)
                    landed = self._current
                    break
        return self._deliver(landed, base)

    def set_action(self, surface: Surface, action: Action) -> Swapped:
        return self.swap_func(lambda p: p.with_action(surface, action))

    def _refuse_reentry(self) -> None:
        if getattr(self._local, "delivering", False):
            raise ReentrantSwapError("a subscriber may not swap the policy it is being told about")

    def _deliver(self, landed: PolicyGeneration, previous: PolicyGeneration) -> Swapped:
        with self._deliver_lock:
            current = self._current
            if current.generation <= self._delivered.generation:
                return Swapped(landed, previous, notified=False)
            told, self._delivered = self._delivered, current
            with self._lock:
                subscribers = list(self._subscribers.items())
            failures: list[SubscriberFailure] = []
            self._local.delivering = True
            try:
                for token, subscriber in subscribers:
                    try:
                        subscriber(told, current)
                    except Exception as exc:
                        failures.append(SubscriberFailure(token, exc))
            finally:
                self._local.delivering = False
        return Swapped(landed, previous, notified=True, failures=tuple(failures))
