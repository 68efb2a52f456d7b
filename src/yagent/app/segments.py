"""Streamed model text cut into segments, so each is screened for personal data once, whole.

A provider streams a reply in pieces of a few characters; screening each piece alone costs a pii
pass per piece and misses what spans two pieces (an e-mail address cut in half is in neither).
`Segments` gathers a lane's `assistant_delta` pieces and hands back committed segments:

Contract:
- A segment ends at a line break (everything up to the last one waiting is committed), when the
  channel changes (reasoning / answer), at `flush` (the host calls it before any other event of
  the lane: the turn ends, a retry starts, a tool runs), or — a line longer than `LINE_MAX` — at
  its last whitespace (a single word longer than that is cut where it stands). What is screened
  as a whole is therefore a line, or `LINE_MAX` characters of one: an item of personal data that
  itself spans a line break or a cut of an over-long line is the one case seen in two parts.
- Text is never dropped, reordered or duplicated: the segments of a lane, joined, are its pieces
  joined. Each segment keeps the fields of the piece that started it (agent, channel, lane).
Leaves to the host: screening each segment (`Safety.for_display`) before it is shown.
"""

from __future__ import annotations

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
    if newline >= 0:
        return newline + 1
    if len(text) < LINE_MAX:
        return 0
    space = max(text.rfind(" "), text.rfind("\t"))
    return space + 1 if space > 0 else len(text)
