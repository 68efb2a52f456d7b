"""Telemetry: yagent's events through the trajectory projector, the watchdog and OpenTelemetry.

Contract:
- `VOCABULARY` is the one place that knows yagent's event names: `model_request` / `assistant_turn`
  are a step (a model call), `tool_call` / `tool_result` a call, `delegation_start` / a sub-agent's
  `run_end` a delegation span, the top-level `run_end` the end of the turn. Display-only and
  bookkeeping events are ignored on purpose; anything else is counted as unrecognised.
- `project(events)` replays recorded events (the session store's `EventRecord`s) into turns and
  watchdog findings; `Telemetry` does the same live, one event at a time, and hands each finished
  turn to an `OtelExporter`: one trace per turn, a span per model call, tool call and delegation,
  parent/child links from the projection, token usage and cost as attributes, watchdog warnings
  as span events. Metric points carry only labels `otelmap` allows — never a forbidden one.
- `Telemetry(rows=False)` keeps no rows (for a host with no exporter, which reads none): each
  event is translated into the watchdog's pairing signals only (`RuleBook.pairing`: the fields
  `watchdog.PAIRING` names, no times, names or attributes) — so the same findings, in the same
  order, at the same events; its `projection()` and `trajectory` are refused (a `ValueError`),
  never empty, and it cannot be given a sink. Such a telemetry builds no `Trajectory`: the
  projector, its rows and spans are imported when a telemetry that keeps rows is built (or a
  recorded session projected), never by the vocabulary alone.
- OpenTelemetry is optional (`pip install 'yagent[otel]'`): `exporter_from_env` returns None when
  no `OTEL_*` variable asks for export, and raises `TelemetryUnavailableError` when one does but
  the SDK is missing — asked-for telemetry is never silently off.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from yagent.agents.results import Status
from yagent.app.otelenv import TelemetryUnavailableError, wants_export
from yagent.kernel.trace.trajectory import (
    Declares,
    Kind,
    PairingSignal,
    Ref,
    RuleBook,
    SignalRule,
)
from yagent.kernel.trace.watchdog import Finding, Watchdog
from yagent.llm import Usage
from yagent.llm.pricing import DEFAULT_PRICES, PriceTable
from yagent.messaging import Event

if TYPE_CHECKING:  # the projector loads where rows are kept (module contract)
    from yagent.kernel.trace.trajectory import SpanPlan, Trajectory, Turn, TurnProjector

WARNING_EVENT = "watchdog_warning"  # the event a host records for a watchdog finding
NOTHING: tuple[Finding, ...] = ()
NOTHING_SIGNALLED: tuple[PairingSignal, ...] = ()

_D = "delegation_id"
_STEP = Ref("step", (_D, "step"))
_CALL = Ref("call", (_D, "call_id"))
_LANE = Ref("span", (_D,))
_USAGE = {
    "model": "model",
    "input_tokens": "usage.input_tokens",
    "output_tokens": "usage.output_tokens",
    "cache_read_tokens": "usage.cache_read_tokens",
    "cache_write_tokens": "usage.cache_write_tokens",
    "cost": "cost",
    "text": "text",
}
_RUN = {"status": "status", "agent": "agent", "steps": "steps", "error": "error", "note": "note"}

VOCABULARY = RuleBook(
    {
        "model_request": SignalRule(
            Kind.STEP_START, _STEP, _LANE, name="agent", scope=_D,
            attrs={"step": "step", "agent": "agent"},
        ),
        "assistant_turn": SignalRule(
            Kind.STEP_END, _STEP, _LANE, name="agent", scope=_D,
            declares=Declares("tool_calls", Ref("call", (_D, "id"))),
            attrs={"step": "step", "agent": "agent", **_USAGE},
        ),
        "tool_call": SignalRule(
            Kind.CALL, _CALL, _STEP, name="name", scope=_D,
            attrs={"call_id": "call_id", "step": "step", "arguments": "arguments"},
        ),
        "tool_result": SignalRule(
            Kind.RESULT, _CALL, _STEP, name="name", scope=_D, ok="ok", outcome="kind",
            attrs={"call_id": "call_id", "step": "step", "result": "content"},
        ),
        # A host call made by a program (run_program), a child of the program's own call.
        "program_call": SignalRule(
            Kind.CALL, _CALL, Ref("call", (_D, "parent_call_id")), name="name", scope=_D,
            attrs={"call_id": "call_id"},
        ),
        "program_result": SignalRule(
            Kind.RESULT, _CALL, Ref("call", (_D, "parent_call_id")), name="name", scope=_D,
            ok="ok", outcome="kind", attrs={"call_id": "call_id", "stage": "stage"},
        ),
        # Published by whoever starts a sub-agent: its lane, the agent, and the parent's call.
        "delegation_start": SignalRule(
            Kind.SPAN_START, _LANE, Ref("call", ("parent_delegation_id", "call_id")),
            name="agent", scope=_D, attrs={"agent": "agent", "task": "task"},
        ),
        "run_end": (
            SignalRule(Kind.TURN_END, when={_D: ""}, attrs=_RUN),
            SignalRule(Kind.SPAN_END, _LANE, name="agent", scope=_D, ok="ok", outcome="status",
                 attrs=_RUN),
        ),
    },
    ignore=(
        "assistant_delta", "reminder", "sub_agent_activity", WARNING_EVENT, "delegation_receipt"
    ),
)  # fmt: skip


def enrich(type: str, payload: Mapping[str, Any], prices: PriceTable) -> Mapping[str, Any]:
    """What the loop leaves implicit, made explicit: a model call's cost (absent when the model
    is unpriced — never guessed) and whether a run ended in error."""
    if type == "assistant_turn" and "cost" not in payload:
        usage = payload.get("usage")
        if isinstance(usage, Mapping):
            counts = {
                k: v
                for k, v in usage.items()
                if k in Usage.__dataclass_fields__
                and isinstance(v, int)
                and not isinstance(v, bool)
            }
            cost = prices.cost(str(payload.get("model", "")), Usage(**counts))
            if cost is not None:
                return {**payload, "cost": cost}
    if type == "run_end" and "ok" not in payload:
        try:
            status = Status(str(payload.get("status")))
        except ValueError:
            return payload  # an unknown status: whether it failed is not guessed
        return {**payload, "ok": not status.is_error}
    return payload


class Recorded(Protocol):
    """A stored event: `yagent.memory.EventRecord` fits."""

    @property
    def seq(self) -> int: ...
    @property
    def ts(self) -> float: ...
    @property
    def type(self) -> str: ...
    @property
    def payload(self) -> Mapping[str, Any]: ...


@dataclass(frozen=True, slots=True)
class Projection:
    turns: tuple[Turn, ...]
    findings: tuple[tuple[Finding, ...], ...]  # per turn, same index
    events: int
    unrecognised: int
    unrecognised_types: tuple[str, ...] = ()  # their event types, each once, first seen first


class _Feed:
    """Trajectory + watchdog, fed together; findings grouped by turn. Without `rows`, the
    watchdog alone: signals are translated for it, and no row, turn or finding is kept."""

    def __init__(self, prices: PriceTable, *, rows: bool = True) -> None:
        self.rows = rows
        self.prices = prices
        self._trajectory: Trajectory | None = None
        if rows:
            from yagent.kernel.trace.trajectory import projector  # rows kept: it loads here

            self._trajectory = projector.Trajectory(VOCABULARY)
        self.watchdog = Watchdog()
        self.findings: dict[int, list[Finding]] = {}
        self.unrecognised: dict[str, None] = {}

    def feed(
        self, type: str, payload: Mapping[str, Any], ts: float | None, seq: int | None
    ) -> tuple[int, bool, tuple[Finding, ...]]:
        """(turn index, whether this event ended that turn, new findings)."""
        if not self.rows:  # nothing to export: a turn's end changes nothing here
            return 0, False, self.watch(type, payload)
        update = self.trajectory.feed(type, enrich(type, payload, self.prices), ts=ts, seq=seq)
        if not update.recognised:
            self.unrecognised[type] = None
        found = tuple(f for s in update.signals for f in self.watchdog.observe(s))
        self.findings.setdefault(update.turn, []).extend(found)
        ended = any(s.kind is Kind.TURN_END for s in update.signals)
        return update.turn, ended, found

    @property
    def trajectory(self) -> Trajectory:
        """The rows' projector; refused when no rows are kept (`Telemetry.trajectory`)."""
        if self._trajectory is None:
            raise ValueError("this feed keeps no rows (rows=False): nothing to project")
        return self._trajectory

    @property
    def current(self) -> TurnProjector | None:
        """The turn still open, if rows are kept."""
        return None if self._trajectory is None else self._trajectory.current

    def watch(self, type: str, payload: Mapping[str, Any]) -> tuple[Finding, ...]:
        """The watchdog alone, fed the pairing fields it reads (`watchdog.PAIRING`)."""
        found = NOTHING
        for signal in VOCABULARY.pairing(type, payload) or NOTHING_SIGNALLED:
            found += self.watchdog.observe(signal)
        return found

    def projection(self) -> Projection:
        turns = self.trajectory.turns()
        findings = tuple(tuple(self.findings.get(t.index, ())) for t in turns)
        return Projection(
            turns,
            findings,
            self.trajectory.events,
            self.trajectory.unrecognised,
            tuple(self.unrecognised),
        )


def project(events: Iterable[Recorded], *, prices: PriceTable = DEFAULT_PRICES) -> Projection:
    """A recorded session's events (in seq order) as turns of rows, with watchdog findings."""
    feed = _Feed(prices)
    for event in events:
        feed.feed(event.type, event.payload, event.ts, event.seq)
    found = feed.watchdog.close_all()  # a session that stopped mid-turn: its steps judged too
    current = feed.current
    if current is not None and found:
        feed.findings.setdefault(current.index, []).extend(found)
    return feed.projection()


class TurnSink(Protocol):
    def export(
        self, turn: Turn, *, session_id: str = "", findings: Sequence[Finding] = ()
    ) -> tuple[SpanPlan, ...]: ...

    def shutdown(self) -> None: ...


class Telemetry:
    """The live path: `observe` every published event; finished turns go to the sink.

    `on_warning` receives each watchdog finding as it is found (the host records it in the
    session). `close()` exports a turn still open when the app stops, marked as not closed."""

    def __init__(
        self,
        session_id: str,
        *,
        sink: TurnSink | None = None,
        prices: PriceTable = DEFAULT_PRICES,
        on_warning: Callable[[Finding], None] | None = None,
        rows: bool = True,
    ) -> None:
        if sink is not None and not rows:
            raise ValueError("a telemetry that keeps no rows has nothing to export")
        self.session_id = session_id
        self._sink = sink
        self._feed = _Feed(prices, rows=rows)
        self._on_warning = on_warning
        self._exported: set[int] = set()
        self._lock = threading.Lock()

    @property
    def trajectory(self) -> Trajectory:
        self._rows_kept()
        return self._feed.trajectory

    def _rows_kept(self) -> None:
        if not self._feed.rows:
            raise ValueError("this telemetry keeps no rows (rows=False): nothing to project")

    def observe_event(self, event: Event) -> None:
        """An `App.observers` entry."""
        if self._feed.rows:
            self.observe(event.type, event.payload, ts=event.ts)
            return
        with self._lock:  # no rows: the watchdog alone (`observe`, without its bookkeeping)
            found = self._feed.watch(event.type, event.payload)
        if found and self._on_warning is not None:
            for finding in found:
                self._on_warning(finding)

    def observe(
        self, type: str, payload: Mapping[str, Any], *, ts: float | None, seq: int | None = None
    ) -> tuple[Finding, ...]:
        with self._lock:
            index, ended, found = self._feed.feed(type, payload, ts, seq)
            if ended:
                self._export(index)
        if self._on_warning is not None:
            for finding in found:
                self._on_warning(finding)
        return found

    def _export(self, index: int) -> None:
        if self._sink is None or index in self._exported:
            return
        self._exported.add(index)
        turn = self._feed.trajectory.turn(index)
        self._sink.export(
            turn, session_id=self.session_id, findings=self._feed.findings.get(index, ())
        )

    def close(self) -> tuple[Finding, ...]:
        with self._lock:
            found = self._feed.watchdog.close_all()
            current = self._feed.current
            if current is not None:
                self._feed.findings.setdefault(current.index, []).extend(found)
                self._export(current.index)
        if self._on_warning is not None:
            for finding in found:
                self._on_warning(finding)
        return found

    def projection(self) -> Projection:
        self._rows_kept()
        with self._lock:
            return self._feed.projection()


def exporter_from_env(
    env: Mapping[str, str] | None = None,
    *,
    span_exporter: Any = None,
    metric_reader: Any = None,
) -> TurnSink | None:
    """The exporter given, else the one the `OTEL_*` variables ask for, else None."""
    env = os.environ if env is None else env
    if span_exporter is None and not wants_export(env):
        return None
    try:
        from yagent.app import otelexport  # the SDK is the optional extra `otel`
    except ImportError as exc:
        raise TelemetryUnavailableError(
            "OpenTelemetry export is configured but the SDK is not installed: "
            "pip install 'yagent[otel]'"
        ) from exc
    if span_exporter is not None:
        return otelexport.OtelExporter(span_exporter, metric_reader)
    return otelexport.from_env(env)


__all__ = [
    "VOCABULARY",
    "WARNING_EVENT",
    "Projection",
    "Telemetry",
    "TurnSink",
    "enrich",
    "exporter_from_env",
    "project",
]
