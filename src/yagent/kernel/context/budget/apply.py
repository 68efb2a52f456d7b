"""budget.apply: carrying out a compaction plan through the host's summariser and archiver.

Guarantees:
- `apply_plan` first checks the messages are the ones planned (same ids, same order), else
  `StalePlanError`: a plan is never applied to a list it was not made for.
- Archive first, then summarise: the archiver receives every message leaving the context, in
  full, before anything is replaced, so nothing is lost. If archiving fails, or the summariser
  fails or returns nothing, the original messages come back unchanged with `compacted=False` and
  the `error` saying which step failed (fail-soft). Cancellation is never swallowed.
- The new list is the kept messages in their original order with one summary message (built by
  the host's `make_summary`) where the first archived message was.
- A summary larger than the plan's `summary_tokens` is still used, but `summary_overrun` says by
  how much (only measured when a counter is given).
Leaves to the host: the message format (`make_summary`, `id_of`), the summarising model call,
where the archive lives and what its reference means.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from yagent.kernel.context.budget.errors import StalePlanError
from yagent.kernel.context.budget.meter import TokenCounter
from yagent.kernel.context.budget.plan import Plan

M = TypeVar("M")
M_contra = TypeVar("M_contra", contravariant=True)


class Summarizer(Protocol[M_contra]):
    """Writes the summary of messages leaving the context (typically one model call)."""

    async def summarize(self, messages: Sequence[M_contra], *, max_tokens: int) -> str: ...


class Archiver(Protocol[M_contra]):
    """Stores messages leaving the context in full; returns a reference to find them again."""

    async def archive(self, messages: Sequence[M_contra]) -> str: ...


@dataclass(frozen=True, slots=True)
class Applied(Generic[M]):
    """The outcome of `apply_plan`: the new messages and what happened on the way."""

    messages: tuple[M, ...]
    compacted: bool
    archived: tuple[M, ...]
    archive_ref: str | None
    summary: str | None
    error: str | None
    summary_overrun: int = 0


def _check_fresh(plan: Plan, messages: Sequence[M], id_of: Callable[[M], str]) -> None:
    ids = tuple(id_of(m) for m in messages)
    if ids != plan.ids:
        raise StalePlanError(
            f"budget: the plan was made for {len(plan.ids)} messages that are no longer the "
            f"ones given ({len(ids)}); plan again"
        )


def _failed(
    messages: Sequence[M], archived: tuple[M, ...], ref: str | None, why: str
) -> Applied[M]:
    return Applied(tuple(messages), False, archived, ref, None, why)


async def apply_plan(
    plan: Plan,
    messages: Sequence[M],
    *,
    summarizer: Summarizer[M],
    archiver: Archiver[M],
    make_summary: Callable[[str, str], M],
    id_of: Callable[[M], str],
    counter: TokenCounter | None = None,
) -> Applied[M]:
    """Archive, summarise, rebuild; `make_summary(summary_text, archive_ref)` builds the message."""
    _check_fresh(plan, messages, id_of)
    leaving = tuple(messages[i] for i in plan.archive)
    try:
        ref = await archiver.archive(leaving)
    except Exception as exc:
        return _failed(messages, (), None, f"archiving failed, nothing compacted: {exc!r}")
    if not isinstance(ref, str) or not ref:
        return _failed(messages, (), None, "the archiver returned no reference, nothing compacted")
    if plan.summarize:
        try:
            summary = await summarizer.summarize(
                [messages[i] for i in plan.summarize], max_tokens=plan.summary_tokens
            )
        except Exception as exc:
            return _failed(messages, leaving, ref, f"summariser failed, original kept: {exc!r}")
        if not isinstance(summary, str) or not summary.strip():
            return _failed(messages, leaving, ref, "summariser returned nothing, original kept")
    else:
        summary = ""
    skipped = len(plan.archive_only)
    if skipped:
        summary = (
            f"{summary}\n\n" if summary else ""
        ) + f"[{skipped} earlier messages are only in the archive ({ref}): not summarised]"
    overrun = max(0, counter(summary) - plan.summary_tokens) if counter is not None else 0
    position = sum(1 for k in plan.keep if k < plan.archive[0])
    rebuilt = [messages[i] for i in plan.keep]
    rebuilt.insert(position, make_summary(summary, ref))
    return Applied(tuple(rebuilt), True, leaving, ref, summary, None, overrun)
