"""budget.plan: the compaction plan — what to summarise, keep verbatim and archive (pure).

Guarantees:
- `plan_compaction` is a pure function of its inputs: the same messages, window and settings give
  the same `Plan`, with a `fingerprint` over the ids that would leave the context.
- Kept verbatim, always: messages whose role is in `keep_roles` (the system prompt by default),
  pinned messages, and the last `keep_recent` other messages. A `group` (for example a call and
  its results) is never split: when any member is kept for any of these reasons, the whole group
  is kept.
- Everything that leaves the context is archived in full (`archive`); the newest of those, up to
  `summary_input_limit` tokens, are what the summariser reads (`summarize`). Nothing is dropped
  without being archived.
- Three guards against idle spinning, each a `NoPlan` with a reason instead of a plan:
  nothing to compact (already at or under the target, or nothing removable); compaction would
  not free enough (the kept messages plus the summary would still exceed the target, or the
  summary costs what it frees); the same plan as last time (`previous` fingerprint) — refused,
  because repeating a plan that did not help only spins.
Refuses (`BudgetError`): a target outside (0, window], negative sizes, duplicate ids.
Leaves to the host: when to plan (see `Usage.due`), the message format, and remembering the
previous fingerprint between turns.
"""

from __future__ import annotations

import enum
import hashlib
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from yagent.kernel.context.budget.errors import BudgetError

DEFAULT_SUMMARY_TOKENS = 1024


@dataclass(frozen=True, slots=True)
class Item:
    """One message as the planner sees it: a stable id, its role, its size and its ties."""

    id: str
    role: str
    tokens: int
    pinned: bool = False
    group: str | None = None


class Reason(enum.StrEnum):
    UNDER_TARGET = "under_target"
    NOTHING_TO_COMPACT = "nothing_to_compact"
    INSUFFICIENT_GAIN = "insufficient_gain"
    REPEATED = "repeated"


@dataclass(frozen=True, slots=True)
class NoPlan:
    """No compaction, and why."""

    reason: Reason
    detail: str


@dataclass(frozen=True, slots=True)
class Plan:
    """A compaction decision over `ids` (the messages in order, as planned)."""

    ids: tuple[str, ...]
    keep: tuple[int, ...]
    summarize: tuple[int, ...]
    archive: tuple[int, ...]
    tokens_before: int
    tokens_after: int
    summary_tokens: int
    fingerprint: str

    @property
    def freed(self) -> int:
        return self.tokens_before - self.tokens_after

    @property
    def archive_only(self) -> tuple[int, ...]:
        """Indices archived but not shown to the summariser (beyond its input limit)."""
        shown = set(self.summarize)
        return tuple(i for i in self.archive if i not in shown)


def fingerprint(ids: Sequence[str]) -> str:
    """The identity of a plan: what leaves the context, in order."""
    digest = hashlib.sha256()
    for item_id in ids:
        digest.update(item_id.encode("utf-8", "surrogatepass"))
        digest.update(b"\x00")
    return digest.hexdigest()


def _validate(items: Sequence[Item], window: int, target: int, keep_recent: int) -> None:
    if window <= 0:
        raise BudgetError(f"budget: the window must be positive, got {window}")
    if not 0 < target <= window:
        raise BudgetError(f"budget: the target must be in (0, {window}], got {target}")
    if keep_recent < 0:
        raise BudgetError(f"budget: keep_recent cannot be negative, got {keep_recent}")
    seen: set[str] = set()
    for item in items:
        if item.tokens < 0:
            raise BudgetError(f"budget: message {item.id!r} has a negative size")
        if item.id in seen:
            raise BudgetError(f"budget: message id {item.id!r} appears twice")
        seen.add(item.id)


def _recent_start(items: Sequence[Item], keep_roles: Collection[str], keep_recent: int) -> int:
    """Index of the first message of the recent tail (the last `keep_recent` movable ones)."""
    movable = [i for i, item in enumerate(items) if item.role not in keep_roles]
    if keep_recent == 0 or not movable:
        return len(items)
    return movable[-keep_recent] if keep_recent <= len(movable) else 0


def _removable(items: Sequence[Item], keep_roles: Collection[str], recent_start: int) -> list[int]:
    """Messages free to leave: not kept themselves, and in no group with a kept message."""
    anchored = [
        i >= recent_start or item.role in keep_roles or item.pinned for i, item in enumerate(items)
    ]
    kept_groups = {
        item.group for item, anchor in zip(items, anchored, strict=True) if anchor and item.group
    }
    return [
        i
        for i, item in enumerate(items)
        if not anchored[i] and (item.group is None or item.group not in kept_groups)
    ]


def plan_compaction(
    items: Sequence[Item],
    *,
    window: int,
    target: int,
    keep_recent: int,
    summary_tokens: int = DEFAULT_SUMMARY_TOKENS,
    summary_input_limit: int | None = None,
    keep_roles: Collection[str] = frozenset({"system"}),
    previous: str | None = None,
) -> Plan | NoPlan:
    """Decide a compaction that brings the messages to `target` tokens, or say why not."""
    _validate(items, window, target, keep_recent)
    if summary_tokens < 0 or (summary_input_limit is not None and summary_input_limit <= 0):
        raise BudgetError("budget: summary sizes must be positive")
    total = sum(item.tokens for item in items)
    if total <= target:
        return NoPlan(Reason.UNDER_TARGET, f"{total} tokens, already within the target {target}")
    removable = _removable(items, keep_roles, _recent_start(items, keep_roles, keep_recent))
    if not removable:
        return NoPlan(
            Reason.NOTHING_TO_COMPACT,
            f"{total} tokens, but every message is system, pinned or among the last {keep_recent}",
        )
    removed = sum(items[i].tokens for i in removable)
    after = total - removed + summary_tokens
    if removed <= summary_tokens or after > target:
        return NoPlan(
            Reason.INSUFFICIENT_GAIN,
            f"compacting {len(removable)} messages ({removed} tokens) would leave {after} tokens "
            f"against the target {target}",
        )
    plan_id = fingerprint([items[i].id for i in removable])
    if previous is not None and previous == plan_id:
        return NoPlan(Reason.REPEATED, "the same plan as last time: it did not help, refused")
    summarize = _summary_input(items, removable, summary_input_limit)
    keep = tuple(i for i in range(len(items)) if i not in set(removable))
    return Plan(
        ids=tuple(item.id for item in items),
        keep=keep,
        summarize=summarize,
        archive=tuple(removable),
        tokens_before=total,
        tokens_after=after,
        summary_tokens=summary_tokens,
        fingerprint=plan_id,
    )


def _summary_input(
    items: Sequence[Item], removable: list[int], limit: int | None
) -> tuple[int, ...]:
    """The newest removed messages that fit the summariser's input, in original order."""
    if limit is None:
        return tuple(removable)
    chosen: list[int] = []
    used = 0
    for i in reversed(removable):
        if used + items[i].tokens > limit:
            break
        chosen.append(i)
        used += items[i].tokens
    return tuple(reversed(chosen))
