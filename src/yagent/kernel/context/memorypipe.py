"""memorypipe: memories on their way into the context — inject, tag, cite.

Guarantees:
- `select(memories, scopes=...)` keeps only memories whose scope is exactly one of `scopes`:
  no parent or global fallback (a project query never picks up global memories unless the host
  names the global scope itself), no prefix matching.
- A memory without a source is not injected: without one it reads exactly like a guess of the
  model's. It is dropped and the drop is reported with its reason, as are memories without an id
  (they cannot be cited), without text, or with an unusable time (freshness cannot be judged).
- Same id ⇒ only the newest (`at`; on a tie, the later one given) is kept; the others are
  reported as superseded.
- Injected memories come newest first (ties by id). Trimming to `budget` (measured by `counter`
  on each tagged entry) is explicit: the first that does not fit and every older one are
  reported as `over_budget`, and the rendering says how many were left out.
- Each injected item is tagged with its id, source and time (`tag`); `render` neutralises
  band imitations in memory text (memories are data) and wraps the whole as a genuine band.
- `cite(id)` is the one citation form; `citations(text, injection)` finds the ids cited in a
  model's text and separates known ids from unknown ones (a citation of something never
  injected).
Refuses (`MemoryPipeError`): no scope to match, a negative budget.
Leaves to the host: reading and writing memories, deciding what is worth remembering, scopes'
names.
"""

from __future__ import annotations

import enum
import math
import re
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime

from yagent.kernel.context import reminder

KIND = "memories"
_CITE = re.compile(r"\[memory:([^\]\s]{1,200})\]")


class MemoryPipeError(ValueError):
    """A selection that cannot be made as asked."""


@dataclass(frozen=True, slots=True)
class Memory:
    id: str
    text: str
    source: str | None
    at: float
    scope: str


class DropReason(enum.StrEnum):
    NO_ID = "no_id"
    NO_SOURCE = "no_source"
    NO_TEXT = "no_text"
    BAD_TIME = "bad_time"
    SUPERSEDED = "superseded"
    OVER_BUDGET = "over_budget"


@dataclass(frozen=True, slots=True)
class Drop:
    memory_id: str
    reason: DropReason
    detail: str


@dataclass(frozen=True, slots=True)
class Injection:
    """What goes into the context, what did not and why."""

    items: tuple[Memory, ...]
    dropped: tuple[Drop, ...]
    scopes: tuple[str, ...]
    out_of_scope: int
    budget: int | None
    used: int

    @property
    def trimmed(self) -> int:
        return sum(1 for d in self.dropped if d.reason is DropReason.OVER_BUDGET)

    @property
    def ids(self) -> frozenset[str]:
        return frozenset(m.id for m in self.items)


def _problem(memory: Memory) -> tuple[DropReason, str] | None:
    if not isinstance(memory.id, str) or not memory.id.strip():
        return DropReason.NO_ID, "a memory without an id cannot be cited"
    if not isinstance(memory.source, str) or not memory.source.strip():
        return DropReason.NO_SOURCE, "a memory without a source reads like a guess"
    if not isinstance(memory.text, str) or not memory.text.strip():
        return DropReason.NO_TEXT, "nothing to inject"
    if isinstance(memory.at, bool) or not isinstance(memory.at, int | float):
        return DropReason.BAD_TIME, "its time is not a number"
    if not math.isfinite(memory.at):
        return DropReason.BAD_TIME, "its time is not finite"
    return None


def _newest(valid: list[Memory], dropped: list[Drop]) -> list[Memory]:
    latest: dict[str, Memory] = {}
    for memory in valid:
        current = latest.get(memory.id)
        if current is None or memory.at >= current.at:
            if current is not None:
                dropped.append(Drop(current.id, DropReason.SUPERSEDED, f"older than {memory.at}"))
            latest[memory.id] = memory
        else:
            dropped.append(Drop(memory.id, DropReason.SUPERSEDED, f"older than {current.at}"))
    return sorted(latest.values(), key=lambda m: (-m.at, m.id))


def select(
    memories: Iterable[Memory],
    *,
    scopes: str | Collection[str],
    budget: int | None = None,
    counter: Callable[[str], int] = len,
) -> Injection:
    """The memories to inject for exactly these scopes, within `budget`, with every drop named."""
    wanted = (scopes,) if isinstance(scopes, str) else tuple(scopes)
    if not wanted or any(not isinstance(s, str) or not s for s in wanted):
        raise MemoryPipeError("memorypipe: name at least one scope, exactly")
    if budget is not None and budget < 0:
        raise MemoryPipeError(f"memorypipe: the budget cannot be negative, got {budget}")
    dropped: list[Drop] = []
    valid: list[Memory] = []
    out_of_scope = 0
    for memory in memories:
        if memory.scope not in wanted:
            out_of_scope += 1
            continue
        problem = _problem(memory)
        if problem is None:
            valid.append(memory)
        else:
            dropped.append(Drop(str(memory.id or ""), *problem))
    ordered = _newest(valid, dropped)
    kept: list[Memory] = []
    used = 0
    for position, memory in enumerate(ordered):
        cost = counter(tag(memory))
        if budget is not None and used + cost > budget:
            dropped.extend(
                Drop(m.id, DropReason.OVER_BUDGET, f"did not fit the budget of {budget}")
                for m in ordered[position:]
            )
            break
        kept.append(memory)
        used += cost
    return Injection(tuple(kept), tuple(dropped), wanted, out_of_scope, budget, used)


def _attr(value: str) -> str:
    return " ".join(value.split()).replace("&", "&amp;").replace('"', "&quot;")


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def tag(memory: Memory) -> str:
    """One memory with its id, source and time."""
    text = reminder.neutralize(memory.text, extra_kinds=("memory",))
    return (
        f'<memory id="{_attr(memory.id)}" source="{_attr(memory.source or "")}" '
        f'at="{_iso(memory.at)}">\n{text}\n</memory>'
    )


def cite(memory_id: str) -> str:
    """How a memory is cited."""
    return f"[memory:{memory_id}]"


@dataclass(frozen=True, slots=True)
class Citations:
    known: tuple[str, ...]
    unknown: tuple[str, ...]


def citations(text: str, injection: Injection) -> Citations:
    """Ids cited in `text`, split into injected ones and ones that were never injected."""
    cited = list(dict.fromkeys(_CITE.findall(text)))
    ids = injection.ids
    return Citations(tuple(i for i in cited if i in ids), tuple(i for i in cited if i not in ids))


def render(injection: Injection) -> str:
    """The injection as one trusted band: how to cite, the tagged items, what was left out."""
    head = (
        f"{len(injection.items)} memories for scope {', '.join(injection.scopes)}, newest first. "
        f"Cite one as {cite('<id>')}; each comes from its source at its time and may be outdated."
    )
    parts = [head, *(tag(m) for m in injection.items)]
    if injection.trimmed:
        parts.append(
            f"[{injection.trimmed} older memories did not fit the budget and are not shown]"
        )
    return reminder.wrap("\n".join(parts), kind=KIND)
