"""Span plans: one turn's rows as OpenTelemetry-shaped spans, as plain data.

`plan_turn` returns one root span for the turn (`ROOT_ID`) and one span per row, parents before
children, each with the attributes `otelmap.ATTR_SPECS` declares for its kind and nothing else.
A value outside its declared domain is not emitted and is listed in `rejected`. A row whose
declared parent is absent from the turn, or whose parents form a cycle, hangs on the root and says
so (`yagent.orphan`). Spans need both times, so a row without a measurement borrows them — start
from its parent, end from the turn — and `yagent.timing` says the times are not a measurement.
Exporting the plans (an SDK, ids, processors) is the host's business.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from yagent.kernel.trace.trajectory.otelmap import (
    ATTR_SPECS,
    DEFAULT_OPERATION,
    AttrSpec,
    AttrValue,
)
from yagent.kernel.trace.trajectory.rows import Row, Turn
from yagent.kernel.trace.trajectory.vocabulary import EMPTY

ROOT_ID = "turn"


@dataclass(frozen=True, slots=True)
class SpanEvent:
    name: str
    ts: float | None
    attributes: Mapping[str, AttrValue] = field(default_factory=lambda: EMPTY)


@dataclass(frozen=True, slots=True)
class SpanPlan:
    id: str
    parent_id: str | None  # None only for the turn's root
    kind: str  # "turn", or the row kind
    name: str
    start: float
    end: float
    attributes: Mapping[str, AttrValue]
    failed: bool
    events: tuple[SpanEvent, ...] = ()
    rejected: tuple[str, ...] = ()


def _value(value: Any) -> Any:
    if isinstance(value, tuple):
        return tuple(str(v) for v in value)
    return getattr(value, "value", value)  # enums → their string


def _read(
    spec: AttrSpec, row: Row | None, turn: Turn, host: Mapping[str, Any], orphan: bool
) -> Any:
    source = spec.source
    if source == "row.kind|attrs.operation":
        kind = "turn" if row is None else row.kind.value
        return (row.attrs.get("operation") if row else None) or DEFAULT_OPERATION[kind]
    scope, _, key = source.partition(".")
    if scope == "row" and row is not None:
        return getattr(row, key)
    if scope == "attrs":  # the root span reads the turn end's attributes
        return (row.attrs if row is not None else turn.attrs).get(key)
    if scope == "turn":
        return getattr(turn, key)
    if scope == "host":
        return host.get(key)
    return orphan  # "plan.orphan": `AttrSpec` admits no other source a span can read


def _attributes(
    kind: str, row: Row | None, turn: Turn, host: Mapping[str, Any], orphan: bool
) -> tuple[dict[str, AttrValue], tuple[str, ...]]:
    attrs: dict[str, AttrValue] = {}
    rejected = []
    for spec in ATTR_SPECS:
        if kind not in spec.applies:
            continue
        value = _value(_read(spec, row, turn, host, orphan))
        if value is None or value == () or value == "":  # absent, not out of domain
            continue
        if spec.domain.accepts(value):
            attrs[spec.name] = value
        else:
            rejected.append(spec.name)
    return attrs, tuple(rejected)


def _parents(rows: Sequence[Row]) -> dict[str, str | None]:
    ids = {r.id for r in rows}
    parent = {
        r.id: (r.parent_id if r.parent_id in ids and r.parent_id != r.id else None) for r in rows
    }
    for row in rows:  # a cycle is cut where it is first found; its rows hang on the root
        seen = {row.id}
        current = parent[row.id]
        while current is not None:
            if current in seen:
                parent[row.id] = None
                break
            seen.add(current)
            current = parent[current]
    return parent


def _span_name(kind: str, attrs: Mapping[str, AttrValue], fallback: str) -> str:
    operation = str(attrs.get("gen_ai.operation.name", DEFAULT_OPERATION[kind]))
    detail = {
        "step": attrs.get("gen_ai.request.model"),
        "call": attrs.get("gen_ai.tool.name"),
    }.get(kind, attrs.get("gen_ai.agent.name"))
    detail = detail or fallback
    return f"{operation} {detail}" if detail else operation


def plan_turn(
    turn: Turn,
    *,
    host: Mapping[str, Any] = EMPTY,
    notes: Mapping[str, Sequence[SpanEvent]] = EMPTY,
    turn_failed: bool = False,
    now: float = 0.0,
) -> tuple[SpanPlan, ...]:
    """The turn's spans, root first, then every parent before its children.

    `host` supplies `host.*` sources (e.g. `conversation_id`); `notes` are span events by row id
    (a note for an unknown row goes on the root); `now` is the fallback time of a turn in which no
    time was ever measured."""
    rows = turn.rows
    times = [t for r in rows for t in (r.start, r.end) if t is not None]
    root_start = turn.summary.start if turn.summary.start is not None else min(times, default=now)
    root_end = turn.summary.end if turn.summary.end is not None else max(times, default=root_start)
    root_end = max(root_end, root_start)
    parent = _parents(rows)
    children: dict[str | None, list[Row]] = {}
    for row in rows:
        children.setdefault(parent[row.id], []).append(row)
    known = {r.id for r in rows}
    stray = tuple(e for rid, evs in notes.items() if rid not in known for e in evs)
    attrs, rejected = _attributes("turn", None, turn, host, False)
    plans = [
        SpanPlan(
            id=ROOT_ID,
            parent_id=None,
            kind="turn",
            name=_span_name("turn", attrs, ""),
            start=root_start,
            end=root_end,
            attributes=MappingProxyType(attrs),
            failed=turn_failed,
            events=tuple(notes.get(ROOT_ID, ())) + stray,
            rejected=rejected,
        )
    ]
    starts = {ROOT_ID: root_start}
    queue = deque((ROOT_ID, r) for r in children.get(None, []))
    while queue:
        parent_id, row = queue.popleft()
        start = row.start if row.start is not None else starts[parent_id]
        end = max(row.end if row.end is not None else root_end, start)
        starts[row.id] = start
        orphan = row.parent_id is not None and parent[row.id] is None
        kind = row.kind.value
        attrs, rejected = _attributes(kind, row, turn, host, orphan)
        plans.append(
            SpanPlan(
                id=row.id,
                parent_id=parent_id,
                kind=kind,
                name=_span_name(kind, attrs, row.name),
                start=start,
                end=end,
                attributes=MappingProxyType(attrs),
                failed=row.failed,
                events=tuple(notes.get(row.id, ())),
                rejected=rejected,
            )
        )
        queue.extend((row.id, child) for child in children.get(row.id, []))
    return tuple(plans)
