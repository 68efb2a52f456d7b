"""The projection's values: rows, their pairing and timing states, the turn and its summary.

There is no stored duration anywhere: `duration` is computed from `start` and `end` and is None
whenever there is no measurement (an open row, a start backfilled from the close, an inverted
pair, a missing or backwards clock). Nothing estimates a duration from anything else.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from yagent.kernel.trace.trajectory.vocabulary import EMPTY, RowKind


class Pairing(enum.StrEnum):
    """A call row's pairing. The first three are the current state (exactly one applies and it
    changes when the other half arrives); the duplicates are history and never clear."""

    PAIRED = "paired"
    MISSING_RESULT = "missing_result"
    UNPAIRED_RESULT = "unpaired_result"
    DUPLICATE_RESULT = "duplicate_result"
    DUPLICATE_CALL = "duplicate_call"


CURRENT_STATES = (Pairing.PAIRED, Pairing.MISSING_RESULT, Pairing.UNPAIRED_RESULT)
HISTORY_STATES = (Pairing.DUPLICATE_RESULT, Pairing.DUPLICATE_CALL)


class Timing(enum.StrEnum):
    """Why a row has, or has no, measured duration."""

    MEASURED = "measured"
    OPEN = "open"  # started, not ended (yet)
    BACKFILLED = "backfilled"  # only the end was seen; the start is that same moment
    INVERTED = "inverted"  # the end arrived before the start, or the clock ran backwards
    UNTIMED = "untimed"  # a half carried no time


def pairing_of(opens: int, closes: int) -> tuple[Pairing | None, tuple[Pairing, ...]]:
    """Current state and history from counts alone, so any order of the same events agrees."""
    current = (
        None
        if opens == closes == 0
        else Pairing.PAIRED
        if opens and closes
        else Pairing.MISSING_RESULT
        if opens
        else Pairing.UNPAIRED_RESULT
    )
    history = tuple(
        state
        for state, count in ((Pairing.DUPLICATE_RESULT, closes), (Pairing.DUPLICATE_CALL, opens))
        if count > 1
    )
    return current, history


@dataclass(frozen=True, slots=True)
class Row:
    """One step, call or span of a turn, as the projection knows it now."""

    id: str
    kind: RowKind
    name: str
    parent_id: str | None
    scope: str
    start: float | None
    end: float | None
    timing: Timing
    pairing: Pairing | None  # calls only
    history: tuple[Pairing, ...]  # calls only: duplicate_result / duplicate_call
    ok: bool | None
    outcome: str | None
    declared: bool  # a step end listed this call
    opens: int
    closes: int
    order: int  # position of the row's first signal in the turn
    attrs: Mapping[str, Any] = field(default_factory=lambda: EMPTY)

    @property
    def duration(self) -> float | None:
        if self.timing is not Timing.MEASURED or self.start is None or self.end is None:
            return None
        return self.end - self.start

    @property
    def failed(self) -> bool:
        return self.ok is False

    @property
    def failure(self) -> str | None:
        """The failure kind of a failed row (`_OTHER` when the host gave none), else None."""
        return (self.outcome or "_OTHER") if self.ok is False else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind.value,
            "name": self.name,
            "parent_id": self.parent_id,
            "scope": self.scope,
            "start": self.start,
            "end": self.end,
            "duration": self.duration,
            "timing": self.timing.value,
            "pairing": self.pairing.value if self.pairing else None,
            "history": [h.value for h in self.history],
            "ok": self.ok,
            "outcome": self.outcome,
            "declared": self.declared,
            "attrs": dict(self.attrs),
        }


@dataclass(frozen=True, slots=True)
class Summary:
    """Counts over one turn's rows. `calls_by_pairing` counts current states; `duplicate_*`
    count rows whose history holds that state."""

    steps: int
    calls: int
    spans: int
    paired: int
    missing_result: int
    unpaired_result: int
    duplicate_result: int
    duplicate_call: int
    failed: int
    unmeasured: int  # rows without a measured duration
    signals: int
    malformed: int  # signals naming no row, or a row of another kind
    start: float | None
    end: float | None  # the turn end's time; None while the turn is open

    @property
    def duration(self) -> float | None:
        if self.start is None or self.end is None or self.end < self.start:
            return None
        return self.end - self.start

    @property
    def unanswered(self) -> int:
        """Calls that are not (yet) paired, either way round."""
        return self.missing_result + self.unpaired_result


@dataclass(frozen=True, slots=True)
class Turn:
    """One turn: its rows in timeline order, its summary, and what the turn end said."""

    index: int
    rows: tuple[Row, ...]
    summary: Summary
    closed: bool
    attrs: Mapping[str, Any] = field(default_factory=lambda: EMPTY)
    duplicate_ends: int = 0

    def row(self, row_id: str) -> Row | None:
        return next((r for r in self.rows if r.id == row_id), None)
