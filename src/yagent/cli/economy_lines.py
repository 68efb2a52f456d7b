"""One visible terminal line for each context-economy event (human mode).

Contract: a compaction is always shown (what left, where it is archived, the size before and
after), and so is a failed one (with the error: the run goes on with the full history); a
skipped compaction shows its reason; memories show what was injected and what was dropped and
why; session references show their state; a report that could not be read shows why. Events
that are only measurements (`context`, `offload`) print nothing. `line` returns None for every
event it does not own.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from rich.markup import escape

Payload = Mapping[str, Any]


def _compaction(p: Payload) -> str:
    where = p.get("archive_ref") or "no archive"
    if not p.get("compacted"):
        return (
            f"[yellow]context compaction failed: {escape(str(p.get('error')))} — continuing "
            "with the full history[/]"
        )
    if p.get("truncated"):
        return (
            f"[yellow]⟳ context truncated: {p.get('archived')} messages archived ({where}) "
            f"WITHOUT a summary — {escape(str(p.get('error')))}[/]"
        )
    return (
        f"[magenta]⟳ context compacted: {p.get('archived')} messages summarised and archived "
        f"({where}); ~{p.get('tokens_before')} → ~{p.get('tokens_after')} tokens of history[/]"
    )


def _skipped(p: Payload) -> str:
    return f"[dim](context not compacted: {p.get('reason')} — {escape(str(p.get('detail')))})[/]"


def _memory(p: Payload) -> str:
    dropped = p.get("dropped") or []
    why = ", ".join(sorted({str(d.get("reason")) for d in dropped}))
    text = f"[dim]memories: {len(p.get('injected') or [])} injected"
    if dropped:
        text += f", {len(dropped)} dropped ({why})"
    if p.get("out_of_scope"):
        text += f", {p.get('out_of_scope')} out of scope"
    for problem in p.get("problems") or []:
        text += f"; {escape(str(problem))}"
    return text + "[/]"


def _session_ref(p: Payload) -> str:
    parts = []
    for ref in p.get("references") or []:
        if ref.get("resolved"):
            cut = " (cut)" if ref.get("truncated") else ""
            parts.append(f"{str(ref.get('source'))[:12]} {ref.get('state')}{cut}")
        else:
            parts.append(f"{escape(str(ref.get('reference')))}: {ref.get('why')}")
    return "[dim]session references: " + "; ".join(parts) + "[/]"


def _report(p: Payload) -> str | None:
    note = p.get("note")
    return f"[yellow]{escape(str(note))}[/]" if note else None


_LINES: dict[str, Callable[[Payload], str | None]] = {
    "compaction": _compaction,
    "compaction_skipped": _skipped,
    "memory": _memory,
    "session_ref": _session_ref,
    "report": _report,
    "context": lambda _: None,
    "offload": lambda _: None,
}


def line(kind: str, payload: Payload) -> str | None:
    show = _LINES.get(kind)
    return show(payload) if show is not None else None
