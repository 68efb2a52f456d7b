"""The incremental projector: signals in, the rows of each turn updated in place.

`TurnProjector` keeps one turn; `Trajectory` translates host events with a vocabulary and splits
the stream into turns at each turn end (in feed order: the turn boundary is where the host put
it). Feeding is cheap (no snapshot is built); `rows()`, `row(id)` and `summary()` snapshot on
demand. Pairing states depend only on how many halves of each call were seen, so any order of the
same events ends in the same states; timing is order-sensitive on purpose — a result seen before
its call backfills the start and is never a measurement.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from yagent.kernel.trace.trajectory.rows import Pairing, Row, Summary, Timing, Turn, pairing_of
from yagent.kernel.trace.trajectory.vocabulary import (
    CLOSES,
    EMPTY,
    OPENS,
    Kind,
    RowKind,
    Signal,
    Vocabulary,
)

_ROW_KIND = {**OPENS, **CLOSES}  # plain dicts on the hot path
_OPENING = frozenset(OPENS)


class _State:
    __slots__ = (
        "attrs",
        "close_ts",
        "closes",
        "inverted",
        "kind",
        "name",
        "ok",
        "open_ts",
        "opens",
        "order",
        "outcome",
        "parent",
        "row_id",
        "scope",
        "timeless",
    )

    def __init__(self, row_id: str, kind: RowKind, order: int) -> None:
        self.row_id = row_id
        self.kind = kind
        self.order = order
        self.name = ""
        self.parent: str | None = None
        self.scope = ""
        self.opens = 0
        self.closes = 0
        self.open_ts: float | None = None
        self.close_ts: float | None = None
        self.inverted = False
        self.timeless = False
        self.ok: bool | None = None
        self.outcome: str | None = None
        self.attrs: dict[str, Any] = {}

    def absorb(self, signal: Signal) -> None:
        # First non-empty value wins, so a duplicate cannot rewrite what was already seen.
        if not self.name and signal.name:
            self.name = signal.name
        if self.parent is None and signal.parent is not None:
            self.parent = signal.parent
        if not self.scope and signal.scope:
            self.scope = signal.scope
        for key, value in signal.attrs.items():
            self.attrs.setdefault(key, value)
        if signal.ts is None:
            self.timeless = True

    def open(self, signal: Signal) -> None:
        self.opens += 1
        if signal.ts is not None:
            self.open_ts = signal.ts if self.open_ts is None else min(self.open_ts, signal.ts)

    def close(self, signal: Signal) -> None:
        if self.opens == 0 and self.closes == 0:
            self.inverted = True
        self.closes += 1
        if signal.ts is not None:
            self.close_ts = signal.ts if self.close_ts is None else min(self.close_ts, signal.ts)
        if self.ok is None:
            self.ok = signal.ok
        if self.outcome is None:
            self.outcome = signal.outcome

    def timing(self) -> Timing:
        if self.closes == 0:
            return Timing.OPEN
        if self.opens == 0:
            return Timing.BACKFILLED
        if self.inverted:
            return Timing.INVERTED
        if self.open_ts is None or self.close_ts is None or self.timeless:
            return Timing.UNTIMED
        return Timing.INVERTED if self.close_ts < self.open_ts else Timing.MEASURED

    def snapshot(self, declared: bool) -> Row:
        pairing, history = pairing_of(self.opens, self.closes)
        is_call = self.kind is RowKind.CALL
        start = self.open_ts if self.opens else self.close_ts
        return Row(
            id=self.row_id,
            kind=self.kind,
            name=self.name,
            parent_id=self.parent,
            scope=self.scope,
            start=start,
            end=self.close_ts,
            timing=self.timing(),
            pairing=pairing if is_call else None,
            history=history if is_call else (),
            ok=self.ok,
            outcome=self.outcome,
            declared=declared,
            opens=self.opens,
            closes=self.closes,
            order=self.order,
            attrs=MappingProxyType(dict(self.attrs)) if self.attrs else EMPTY,
        )


class TurnProjector:
    """The rows of one turn, updated as signals arrive in any order."""

    def __init__(self, index: int = 0) -> None:
        self.index = index
        self._states: dict[str, _State] = {}
        self._declared: set[str] = set()
        self._signals = 0
        self._malformed = 0
        self._first_ts: float | None = None
        self._end_ts: float | None = None
        self._closed = False
        self._end_attrs: dict[str, Any] = {}
        self._duplicate_ends = 0

    @property
    def closed(self) -> bool:
        return self._closed

    def apply(self, signal: Signal) -> str | None:
        """Apply one signal; the id of the row it changed (None for a turn end or malformed)."""
        self._signals += 1
        ts = signal.ts
        if ts is not None and (self._first_ts is None or ts < self._first_ts):
            self._first_ts = ts
        if signal.kind is Kind.TURN_END:
            self._end(signal)
            return None
        kind = _ROW_KIND[signal.kind]
        row_id = signal.row
        state = self._states.get(row_id) if row_id is not None else None
        if row_id is None or (state is not None and state.kind is not kind):
            self._malformed += 1
            return None
        if state is None:
            state = self._states[row_id] = _State(row_id, kind, len(self._states))
        state.absorb(signal)
        if signal.kind in _OPENING:
            state.open(signal)
        else:
            state.close(signal)
        if signal.declares:
            self._declared.update(signal.declares)
        return row_id

    def _end(self, signal: Signal) -> None:
        if self._closed:
            self._duplicate_ends += 1
            return
        self._closed = True
        self._end_ts = signal.ts
        self._end_attrs.update(signal.attrs)

    def row(self, row_id: str) -> Row | None:
        state = self._states.get(row_id)
        return None if state is None else state.snapshot(row_id in self._declared)

    def rows(self) -> tuple[Row, ...]:
        """Every row, in timeline order: by start (rows without one last), then first seen."""
        rows = [s.snapshot(s.row_id in self._declared) for s in self._states.values()]
        rows.sort(key=lambda r: (math.inf if r.start is None else r.start, r.order))
        return tuple(rows)

    def declared(self) -> frozenset[str]:
        return frozenset(self._declared)

    def summary(self, rows: tuple[Row, ...] | None = None) -> Summary:
        rows = self.rows() if rows is None else rows
        count = dict.fromkeys(("paired", "missing_result", "unpaired_result"), 0)
        kinds = dict.fromkeys(RowKind, 0)
        dup_result = dup_call = failed = unmeasured = 0
        for row in rows:
            kinds[row.kind] += 1
            if row.pairing is not None:
                count[row.pairing.value] += 1
            dup_result += Pairing.DUPLICATE_RESULT in row.history
            dup_call += Pairing.DUPLICATE_CALL in row.history
            failed += row.failed
            unmeasured += row.duration is None
        return Summary(
            steps=kinds[RowKind.STEP],
            calls=kinds[RowKind.CALL],
            spans=kinds[RowKind.SPAN],
            paired=count["paired"],
            missing_result=count["missing_result"],
            unpaired_result=count["unpaired_result"],
            duplicate_result=dup_result,
            duplicate_call=dup_call,
            failed=failed,
            unmeasured=unmeasured,
            signals=self._signals,
            malformed=self._malformed,
            start=self._first_ts,
            end=self._end_ts if self._closed else None,
        )

    def turn(self) -> Turn:
        rows = self.rows()
        return Turn(
            index=self.index,
            rows=rows,
            summary=self.summary(rows),
            closed=self._closed,
            attrs=MappingProxyType(dict(self._end_attrs)) if self._end_attrs else EMPTY,
            duplicate_ends=self._duplicate_ends,
        )


@dataclass(frozen=True, slots=True)
class Update:
    """What one fed event did: its signals, the rows they changed, and in which turn."""

    turn: int
    signals: tuple[Signal, ...]
    changed: tuple[str, ...]
    recognised: bool


class Trajectory:
    """Host events → turns of rows, through a host-supplied vocabulary."""

    def __init__(self, vocabulary: Vocabulary) -> None:
        self._vocabulary = vocabulary
        self._turns: list[TurnProjector] = []
        self.events = 0
        self.unrecognised = 0

    def feed(
        self,
        type: str,
        payload: Mapping[str, Any],
        *,
        ts: float | None = None,
        seq: int | None = None,
    ) -> Update:
        self.events += 1
        signals = self._vocabulary.translate(type, payload, ts=ts, seq=seq)
        if signals is None:
            self.unrecognised += 1
            return Update(self._index(), (), (), recognised=False)
        changed = []
        for signal in signals:
            row_id = self.apply(signal)
            if row_id is not None:
                changed.append(row_id)
        return Update(self._index(), signals, tuple(changed), recognised=True)

    def apply(self, signal: Signal) -> str | None:
        """Apply an already translated signal to the turn it belongs to."""
        current = self._turns[-1] if self._turns else None
        if current is None or (current.closed and signal.kind is not Kind.TURN_END):
            current = TurnProjector(len(self._turns))
            self._turns.append(current)
        return current.apply(signal)

    def _index(self) -> int:
        return max(len(self._turns) - 1, 0)

    @property
    def current(self) -> TurnProjector | None:
        return self._turns[-1] if self._turns else None

    def turns(self) -> tuple[Turn, ...]:
        return tuple(t.turn() for t in self._turns)

    def turn(self, index: int) -> Turn:
        """One turn's snapshot (cheaper than all of them); IndexError for a turn not seen."""
        return self._turns[index].turn()
