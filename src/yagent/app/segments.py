"""Streamed model text cut into segments, so each is screened for personal data once, whole.

A provider streams a reply in pieces of a few characters; screening each piece alone costs a pii
pass per piece and misses what spans two pieces (an e-mail address cut in half is in neither).
`Segments` gathers a lane's `assistant_delta` pieces and hands back committed segments:

Contract:
- A segment ends at the last *safe cut* waiting: after a line break, or after a whitespace
  character that no item of personal data can span — a tab, or a space (or a character that
  folds to one, NFKC) whose preceding character does not end in a digit or `)` (the only
  characters `kernel.confine.pii` lets stand before a separator inside a match: grouped mobile, card
  and ID numbers, `(+86) `). The word being streamed is therefore held until whitespace follows it,
  and so is a run of digit groups that could still grow into a number; everything before is
  committed at once, so a stream that pauses mid-line shows its stable prefix. Screening the
  segments one by one finds exactly what screening their joined text would: every pii pattern's
  context before and after a match is satisfied by whitespace as by the ends of the string.
- A segment also ends when the channel changes (reasoning / answer), at `flush` (the host calls
  it before any other event of the lane: the turn ends, a retry starts, a tool runs), or — more
  than `LINE_MAX` characters without a safe cut — at their last whitespace (a single word longer
  than that is cut where it stands): the one case where an item of personal data may be seen in
  two parts.
- Text is never dropped, reordered or duplicated: the segments of a lane, joined, are its pieces
  joined. Each segment keeps the fields of the piece that started it (agent, channel, lane).
- Held text is never shown early: a pause flushes nothing (the tail could still become part of a
  match); the host flushes it at the lane's next event.
Leaves to the host: screening each segment (`Safety.for_display`) before it is shown.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

LINE_MAX = 400


@dataclass
class _Pending:
    fields: dict[str, Any]
    text: str


class Segments:
    """Pending streamed text per lane (delegation id)."""

    def __init__(self) -> None:
        self._lanes: dict[str, _Pending] = {}

    def feed(self, payload: Mapping[str, Any]) -> list[dict[str, Any]]:
        """Take one piece; the segments it completes (often none)."""
        lane = str(payload.get("delegation_id", ""))
        text = str(payload.get("text", ""))
        out: list[dict[str, Any]] = []
        pending = self._lanes.get(lane)
        if pending is not None and pending.fields.get("channel") != payload.get("channel"):
            out.extend(self.flush(lane))
            pending = None
        if pending is None:
            pending = self._lanes[lane] = _Pending(dict(payload), "")
        pending.text += text
        cut = _cut(pending.text)
        if cut:
            out.append({**pending.fields, "text": pending.text[:cut]})
            pending.text = pending.text[cut:]
        return out

    def flush(self, lane: str) -> list[dict[str, Any]]:
        """What the lane has waiting, as one segment (none when nothing waits)."""
        pending = self._lanes.pop(lane, None)
        if pending is None or not pending.text:
            return []
        return [{**pending.fields, "text": pending.text}]


def _cut(text: str) -> int:
    """How much of `text` is committed now (0: nothing yet)."""
    newline = text.rfind("\n")
    for at in range(len(text) - 1, newline, -1):
        if text[at].isspace() and _safe_space(text, at):
            return at + 1
    if newline >= 0:
        return newline + 1
    if len(text) < LINE_MAX:
        return 0
    space = max(text.rfind(" "), text.rfind("\t"))
    return space + 1 if space > 0 else len(text)


def _safe_space(text: str, at: int) -> bool:
    """No pii match can span the whitespace at `at`: it is not a separator a match may hold
    (those fold to a space), or what stands before it cannot end a digit group or `(+86)`."""
    if unicodedata.normalize("NFKC", text[at]) != " " or at == 0:
        return True  # at 0: what came before was committed at a safe cut (whitespace)
    before = unicodedata.normalize("NFKC", text[at - 1])
    return not before or not (before[-1].isascii() and (before[-1].isdigit() or before[-1] == ")"))
