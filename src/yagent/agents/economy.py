"""The context economy of one run: metering, compaction, spill and offload, wired for the loop.

Contract:
- `before_request` runs before every model request. It offloads inline objects two-phase (a
  message's object stays inline the first request it is in; from the next request on it is a
  placeholder — the `seen` set lives as long as the run), meters the request by segment (system,
  tool definitions, history, tool results) against the clamped window, and, when the messages
  fill `compact_at` of the room the system prompt and tool definitions leave, plans a compaction
  to `compact_to` of that room with `budget` and applies it: archive first (through the host's
  `archive` callback, the full messages), then the model's summary in place of what left.
  Pinned (the first user message and this run's task) and the last `keep_recent` messages are
  kept verbatim — fewer recent ones, down to the last, only when keeping them all could not free
  enough; a call is never separated from its results. It publishes `context` every request,
  `compaction` for each attempt (with `compacted` and, on failure, the error). It returns the
  messages it was given when it changed none (no copy per request), else a new list.
- A summary that fails never leaves the history as it was (that re-planned and re-archived the
  whole history every step): what was archived leaves anyway, replaced by a visible truncation
  note (`truncated: true` and the reason in the event). After `n` failures in a row the next
  `2**n - 1` compactions (at most `MAX_SUMMARY_PAUSE`) truncate without asking the summariser;
  a summary that succeeds ends the pause. Each archive holds only the messages leaving then, so
  the store grows with the content, not with the number of compactions. Only a failed archive
  keeps every message (nothing may leave unarchived).
- No spinning: when there is no plan (under target, nothing removable, not enough gain, the same
  plan as last time, or the system prompt and tools alone fill the window) it publishes
  `compaction_skipped` with the reason once, and the run goes on.
- `admit` runs on every tool result before it joins the history: objects the model has already
  seen are replaced at once, and content above `max_tool_output` characters (not counting new
  inline objects) goes through `spill` — head kept, the rest stored and named. New inline
  objects go uncounted only while the whole output fits in `INLINE_SHARE` of the window (by the
  run's counter): a bigger one — a 10 MB line of letters reads as a base64 run — is spilled like
  any other output, never sent whole. Tools tagged `pages-spill` are never cut (their pages are
  bounded by the spill's cap).
`before_compact`, when given, is awaited once a compaction plan stands, before anything leaves.
Leaves to the host: the window and ratios (settings), the spill and offload stores, the archive.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from yagent.agents import compaction
from yagent.agents.requestmeter import RequestMeter
from yagent.kernel.context import budget
from yagent.kernel.context.offload import Offloader
from yagent.kernel.context.spill import Spill
from yagent.llm import Message
from yagent.toolspec import Spec
from yagent.toolspec.builtin import PAGES_SPILL

Emit = Callable[[str, Mapping[str, Any]], None]
Archive = Callable[[Mapping[str, Any]], str]  # stores compacted-away messages; returns a reference
SYSTEM_FULL = "system_and_tools_fill_the_window"
MAX_SUMMARY_PAUSE = 16  # compactions truncated without a summary after repeated failures
INLINE_SHARE = 0.25  # of the window an output with new inline objects may fill before it is cut


@dataclass(frozen=True, slots=True)
class ContextSettings:
    """How one run spends its context window. Sizes in tokens unless named `…output` (chars)."""

    window: int = 128_000
    model_limit: int | None = None  # the model's real input limit; None: the window is it
    reserve_output: int = 0
    compact_at: float = 0.8
    compact_to: float = 0.5
    keep_recent: int = 6
    max_tool_output: int = 20_000
    spill: Spill | None = None
    spill_session: str = "run"
    offload: Offloader | None = None
    counter: budget.TokenCounter = budget.approx_tokens


@dataclass(frozen=True, slots=True)
class Admitted:
    """A tool result as it joins the history, and what the economy did to it."""

    content: str
    facts: Mapping[str, Any]


class Economy:
    def __init__(
        self,
        settings: ContextSettings,
        *,
        emit: Emit,
        archive: Archive | None,
        summarizer: budget.Summarizer[compaction.Entry],
        before_compact: Callable[[Mapping[str, Any]], Awaitable[None]] | None = None,
    ) -> None:
        if not 0.0 < settings.compact_to < settings.compact_at <= 1.0:
            raise ValueError("context: need 0 < compact_to < compact_at <= 1")
        self.settings = settings
        limit = settings.model_limit or settings.window
        self.window = budget.clamp_window(
            limit, settings.window, reserve_output=settings.reserve_output
        )
        self.meter = budget.Meter(settings.counter)
        self._request_meter = RequestMeter(self.meter, self.window)  # each text counted once
        self._emit = emit
        self._archive = archive
        self._summarizer = summarizer
        self._before_compact = before_compact  # the host's observer, awaited once a plan stands
        self._ids: list[str] = []
        self._serial = 0
        self._pinned: set[str] = set()
        self._previous: str | None = None
        self._quiet: str | None = None
        self._seen: frozenset[str] = frozenset()
        self._settled: set[str] = set()
        self._settled_upto = 0  # every message before this index is settled: not looked at again
        self._last: budget.Usage | None = None
        self.compactions = 0
        self._failures = 0  # summaries failed in a row
        self._pause = 0  # compactions left that truncate without asking the summariser

    # -- identity --------------------------------------------------------------------------
    def _sync(self, messages: Sequence[Message]) -> None:
        """Stable ids for the messages: the loop only appends between requests."""
        if len(self._ids) > len(messages):
            self._ids = []
            self._settled_upto = 0
        while len(self._ids) < len(messages):
            self._serial += 1
            self._ids.append(f"m{self._serial}")

    def start(self, messages: Sequence[Message]) -> None:
        """Pin the conversation's first user message and this run's task (the last message)."""
        self._sync(messages)
        first = next((i for i, m in enumerate(messages) if m.role == "user"), None)
        if first is not None:
            self._pinned.add(self._ids[first])
        if messages:
            self._pinned.add(self._ids[-1])

    # -- tool results ----------------------------------------------------------------------
    def admit(self, spec: Spec | None, content: str) -> Admitted:
        facts: dict[str, Any] = {}
        inline = 0
        offload = self.settings.offload
        if offload is not None and offload.can_hold(content):
            outcome = offload.process(content, seen=self._seen)  # new objects: marked next request
            content = outcome.value
            if outcome.replaced:
                facts["offloaded"] = [f.digest for f in outcome.replaced]
            inline = sum(4 * math.ceil(f.size / 3) for f in outcome.marked)
        store = self.settings.spill
        exempt = spec is not None and PAGES_SPILL in spec.tags
        if inline and self.settings.counter(content) > self.window.limit * INLINE_SHARE:
            inline = 0  # too big to show even once: counted like any other output
        if store is None or exempt or len(content) - inline <= self.settings.max_tool_output:
            return Admitted(content, facts)
        spilled = store.offer(self.settings.spill_session, content)
        facts["spilled"] = {
            "locator": spilled.locator,
            "stored": spilled.stored,
            "total_bytes": spilled.total_bytes,
            "shown_bytes": spilled.shown_bytes,
            "error": spilled.error,
        }
        return Admitted(spilled.text, facts)

    # -- before each request ---------------------------------------------------------------
    async def before_request(
        self,
        messages: Sequence[Message],
        *,
        step: int,
        system: str,
        tools: Sequence[Mapping[str, Any]],
    ) -> Sequence[Message]:
        self._sync(messages)
        current = self._offload(messages, step)
        usage = self._measure(system, tools, current)
        compacted = await self._compact(current, usage, step)
        if compacted is not None:
            current = compacted
            usage = self._measure(system, tools, current)
        self._publish_context(usage, step, len(current))
        return current

    def _offload(self, messages: Sequence[Message], step: int) -> Sequence[Message]:
        offload = self.settings.offload
        if offload is None:
            return messages
        out: list[Message] | None = None  # a copy, made only once something is replaced
        seen = self._seen  # as of the last request: what the model has really been shown
        replaced: list[str] = []
        kept: list[str] = []
        start = self._settled_upto
        for index in range(start, len(messages)):
            message, key = messages[index], self._ids[index]
            if key in self._settled:
                continue
            if not offload.can_hold(message.content):  # too short for any object: settled
                self._settled.add(key)
                continue
            outcome = offload.process(message.content, seen=seen)
            self._seen = self._seen | outcome.seen
            if outcome.replaced:
                out = list(messages) if out is None else out
                out[index] = replace(message, content=outcome.value)
                replaced.extend(f.digest for f in outcome.replaced)
            kept.extend(f"{found.digest}: {why}" for found, why in outcome.kept)
            if not outcome.marked and not outcome.kept:
                self._settled.add(key)
        while start < len(messages) and self._ids[start] in self._settled:
            start += 1
        self._settled_upto = start  # a run's step costs the same at step 1 000 as at step 1
        if replaced or kept:
            self._emit("offload", {"step": step, "replaced": replaced, "kept": kept})
        return messages if out is None else out

    def _measure(
        self, system: str, tools: Sequence[Mapping[str, Any]], messages: Sequence[Message]
    ) -> budget.Usage:
        return self._request_meter.measure(system, tools, messages)

    def _publish_context(self, usage: budget.Usage, step: int, count: int) -> None:
        grew = usage.largest_growth(self._last) if self._last is not None else None
        self._last = usage
        self._emit(
            "context",
            {
                "step": step,
                "segments": dict(usage.segments),
                "total": usage.total,
                "window": self.window.limit,
                "fraction": round(usage.fraction, 4),
                "messages": count,
                "grew": {"segment": grew.segment, "delta": grew.delta} if grew else None,
                "window_note": self.window.note,
            },
        )

    # -- compaction ------------------------------------------------------------------------
    def _skip(self, reason: str, detail: str, step: int) -> None:
        if self._quiet == reason:
            return
        self._quiet = reason
        self._emit("compaction_skipped", {"step": step, "reason": reason, "detail": detail})

    def _plan(
        self, entries: list[compaction.Entry], room: int, summary_tokens: int
    ) -> tuple[budget.Plan | budget.NoPlan, int]:
        """A plan keeping `keep_recent` messages, fewer (down to 1) when that cannot free enough."""
        counter = self.meter.count
        reading = self.window.limit - summary_tokens - counter(compaction.SUMMARIZER_SYSTEM) - 64
        items = compaction.items(entries, counter, frozenset(self._pinned))
        keep = self.settings.keep_recent
        while True:
            plan = budget.plan_compaction(
                items,
                window=room,
                target=max(1, int(self.settings.compact_to * room)),
                keep_recent=keep,
                summary_tokens=summary_tokens,
                summary_input_limit=max(1, reading),
                previous=self._previous,
            )
            short = (
                isinstance(plan, budget.NoPlan) and plan.reason is budget.Reason.INSUFFICIENT_GAIN
            )
            if not short or keep <= 1:
                return plan, keep
            keep = max(1, keep // 2)

    async def _compact(
        self, messages: Sequence[Message], usage: budget.Usage, step: int
    ) -> list[Message] | None:
        """Compaction when the messages fill `compact_at` of the room the fixed part leaves."""
        limit = self.window.limit
        fixed = usage.tokens(budget.SYSTEM) + usage.tokens(budget.TOOL_DEFINITIONS)
        room = limit - fixed
        if room <= 0:
            detail = f"the system prompt and tool definitions alone take {fixed} of {limit} tokens"
            self._skip(SYSTEM_FULL, detail, step)
            return None
        if usage.total - fixed < self.settings.compact_at * room:
            self._quiet = None
            return None
        summary_tokens = min(budget.DEFAULT_SUMMARY_TOKENS, max(64, limit // 10))
        entries = list(zip(self._ids, messages, strict=True))
        plan, kept_recent = self._plan(entries, room, summary_tokens)
        if isinstance(plan, budget.NoPlan):
            self._skip(plan.reason.value, plan.detail, step)
            return None
        self._previous = plan.fingerprint
        leaving = len(plan.archive)
        if self._before_compact is not None:
            await self._before_compact({"step": step, "tokens_before": plan.tokens_before})

        def make_summary(text: str, ref: str) -> compaction.Entry:
            self._serial += 1
            freed = plan.tokens_before - plan.tokens_after + plan.summary_tokens
            message = compaction.summary_message(text, ref, count=leaving, tokens=freed)
            return f"m{self._serial}", message

        paused = self._pause > 0
        applied = await budget.apply_plan(
            plan,
            entries,
            summarizer=_Paused() if paused else self._summarizer,
            archiver=_Archiver(self._archive, step),
            make_summary=make_summary,
            id_of=lambda entry: entry[0],
            counter=self.meter.count,
        )
        payload: dict[str, Any] = {
            "step": step,
            "compacted": applied.compacted,
            "archived": leaving,
            "summarized": len(plan.summarize),
            "kept": len(plan.keep),
            "kept_recent": kept_recent,
            "tokens_before": plan.tokens_before,
            "tokens_after": plan.tokens_after,
            "archive_ref": applied.archive_ref,
        }
        ref = applied.archive_ref
        if not applied.compacted and ref is None:  # nothing may leave
            self._emit("compaction", {**payload, "error": applied.error})
            return None
        if not applied.compacted and ref is not None:
            failed = None if paused else applied.error or "no summary"
            return self._truncate(plan, entries, ref, payload, failed)
        if plan.summarize:  # a summary was written: the summariser works again
            self._failures = self._pause = 0
        self.compactions += 1
        self._quiet = None
        self._ids = [entry_id for entry_id, _ in applied.messages]
        self._settled_upto = 0
        self._pinned &= set(self._ids)
        summary = applied.summary or ""
        self._emit(
            "compaction",
            {**payload, "summary": summary, "summary_overrun": applied.summary_overrun},
        )
        return [message for _, message in applied.messages]

    def _truncate(
        self,
        plan: budget.Plan,
        entries: list[compaction.Entry],
        ref: str,
        payload: dict[str, Any],
        failed: str | None,
    ) -> list[Message]:
        """The archived messages leave without a summary; a note stands where they were.
        `failed`: the summariser's error, None when it was not asked (paused)."""
        if failed is None:
            self._pause -= 1
            why = f"the summariser is paused after {self._failures} failure(s) in a row"
        else:
            self._failures += 1
            self._pause = min(2**self._failures - 1, MAX_SUMMARY_PAUSE)
            why = f"the summariser failed ({failed})"
        self._serial += 1
        freed = plan.tokens_before - plan.tokens_after + plan.summary_tokens
        note = compaction.truncation_message(ref, count=len(plan.archive), tokens=freed, why=why)
        kept = [entries[i] for i in plan.keep]
        kept.insert(sum(1 for k in plan.keep if k < plan.archive[0]), (f"m{self._serial}", note))
        self.compactions += 1
        self._quiet = None
        self._ids = [entry_id for entry_id, _ in kept]
        self._settled_upto = 0
        self._pinned &= set(self._ids)
        self._emit("compaction", {**payload, "compacted": True, "truncated": True, "error": why})
        return [message for _, message in kept]


class _Paused:
    """The summariser while it is paused: refuses at once, so the plan truncates."""

    async def summarize(self, messages: Sequence[compaction.Entry], *, max_tokens: int) -> str:
        raise RuntimeError("the summariser is paused after repeated failures")


class _Archiver:
    """`budget.Archiver` over the host's callback: the leaving messages, in full, as dicts."""

    def __init__(self, archive: Archive | None, step: int) -> None:
        self._archive = archive
        self._step = step

    async def archive(self, messages: Sequence[compaction.Entry]) -> str:
        if self._archive is None:
            raise RuntimeError("no archive is configured for this run: nothing may leave")
        return self._archive(
            {
                "step": self._step,
                "ids": [entry_id for entry_id, _ in messages],
                "messages": [message.to_dict() for _, message in messages],
            }
        )
