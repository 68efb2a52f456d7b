"""The OpenTelemetry SDK side of telemetry (optional extra `otel`; imported only when used).

`OtelExporter.export(turn)` plans the turn with `trajectory.plan_turn` and emits it as one trace:
the root span is the turn, each span is started with its parent's context and its recorded start
time and ended at its recorded end (times are the events' timestamps, not the export moment).
Model calls are CLIENT spans, the rest INTERNAL; a failed row sets the span status to ERROR with
its `error.type`. With a metric reader it also records `gen_ai.client.operation.duration` (measured
rows only), `gen_ai.client.token.usage` (by `gen_ai.token.type`) and `yagent.cost.usd`, whose
labels pass through `otelmap.metric_labels` — a forbidden label cannot reach a metric point.

`from_env` follows the standard variables: `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none`
turn export off; `OTEL_TRACES_EXPORTER=console` prints spans; an OTLP endpoint
(`OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) or
`OTEL_TRACES_EXPORTER=otlp` exports over OTLP/HTTP (protobuf); `OTEL_EXPORTER_OTLP_PROTOCOL=grpc`
is refused (the extra ships the HTTP exporter only). Metrics follow `OTEL_METRICS_EXPORTER` the
same way (default: OTLP when an endpoint is set).
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping, Sequence

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.sdk.metrics import MeterProvider  # type: ignore[import-untyped,import-not-found,unused-ignore]
from opentelemetry.sdk.metrics.export import (  # type: ignore[import-untyped,import-not-found,unused-ignore]
    ConsoleMetricExporter,
    MetricReader,
    PeriodicExportingMetricReader,
)
from opentelemetry.sdk.resources import Resource  # type: ignore[import-untyped,import-not-found,unused-ignore]
from opentelemetry.sdk.trace import TracerProvider  # type: ignore[import-untyped,import-not-found,unused-ignore]
from opentelemetry.sdk.trace.export import (  # type: ignore[import-untyped,import-not-found,unused-ignore]
    BatchSpanProcessor,
    ConsoleSpanExporter,
    SimpleSpanProcessor,
    SpanExporter,
)
from opentelemetry.trace import SpanKind, Status, StatusCode

from yagent.app.otelenv import TelemetryUnavailableError, otel_choice
from yagent.kernel.trace.trajectory import (
    ROOT_ID,
    SpanEvent,
    SpanPlan,
    Turn,
    metric_labels,
    plan_turn,
)
from yagent.kernel.trace.watchdog import Finding

SCOPE = "yagent"


def notes_of(findings: Iterable[Finding]) -> dict[str, list[SpanEvent]]:
    """Watchdog findings as span events on the step that was closing (or the root)."""
    notes: dict[str, list[SpanEvent]] = {}
    for f in findings:
        event = SpanEvent(f"yagent.watchdog.{f.kind.value}", None, {"yagent.row.id": f.call})
        notes.setdefault(f.step or ROOT_ID, []).append(event)
    return notes


def _ns(seconds: float) -> int:
    return int(seconds * 1_000_000_000)


class OtelExporter:
    """Turns → traces (and metric points when a reader is given)."""

    def __init__(
        self,
        span_exporter: SpanExporter,
        metric_reader: MetricReader | None = None,
        *,
        batch: bool = False,
        resource: Mapping[str, str] | None = None,
    ) -> None:
        self.resource = Resource.create({"service.name": "yagent", **(resource or {})})
        self.provider = TracerProvider(resource=self.resource)
        processor = BatchSpanProcessor if batch else SimpleSpanProcessor
        self.provider.add_span_processor(processor(span_exporter))
        self.tracer = self.provider.get_tracer(SCOPE)
        self.meters: MeterProvider | None = None
        if metric_reader is not None:
            self.meters = MeterProvider(metric_readers=[metric_reader], resource=self.resource)
            meter = self.meters.get_meter(SCOPE)
            self._duration = meter.create_histogram("gen_ai.client.operation.duration", unit="s")
            self._tokens = meter.create_histogram("gen_ai.client.token.usage", unit="{token}")
            self._cost = meter.create_counter("yagent.cost.usd", unit="USD")

    def export(
        self, turn: Turn, *, session_id: str = "", findings: Sequence[Finding] = ()
    ) -> tuple[SpanPlan, ...]:
        host = {"conversation_id": session_id} if session_id else {}
        plans = plan_turn(turn, host=host, notes=notes_of(findings))
        spans: dict[str, trace.Span] = {}
        for plan in plans:
            parent = spans.get(plan.parent_id) if plan.parent_id is not None else None
            context = trace.set_span_in_context(parent) if parent is not None else Context()
            span = self.tracer.start_span(
                plan.name,
                context=context,
                kind=SpanKind.CLIENT if plan.kind == "step" else SpanKind.INTERNAL,
                attributes=dict(plan.attributes),
                start_time=_ns(plan.start),
            )
            for event in plan.events:
                when = event.ts if event.ts is not None else plan.end
                span.add_event(event.name, dict(event.attributes), timestamp=_ns(when))
            if plan.failed:
                span.set_status(Status(StatusCode.ERROR, str(plan.attributes.get("error.type"))))
            spans[plan.id] = span
        for plan in reversed(plans):  # children end before their parents
            spans[plan.id].end(end_time=_ns(plan.end))
        if self.meters is not None:
            self._record(turn, plans)
        return plans

    def _record(self, turn: Turn, plans: Sequence[SpanPlan]) -> None:
        rows = {r.id: r for r in turn.rows}
        for plan in plans:
            labels = metric_labels(plan.attributes)  # the one gate between spans and metrics
            row = rows.get(plan.id)
            duration = row.duration if row is not None else turn.summary.duration
            if duration is not None and plan.kind != "span":
                self._duration.record(duration, labels)
            if row is None or plan.kind != "step":
                continue
            for key, token_type in (("input_tokens", "input"), ("output_tokens", "output")):
                value = row.attrs.get(key)
                if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
                    self._tokens.record(value, {**labels, "gen_ai.token.type": token_type})
            cost = row.attrs.get("cost")
            if isinstance(cost, int | float) and not isinstance(cost, bool) and cost >= 0:
                self._cost.add(float(cost), labels)

    def flush(self) -> None:
        self.provider.force_flush()
        if self.meters is not None:
            self.meters.force_flush()

    def shutdown(self) -> None:
        self.provider.shutdown()
        if self.meters is not None:
            self.meters.shutdown()


def from_env(env: Mapping[str, str]) -> OtelExporter:
    """The exporter the variables ask for (the caller checked `otelenv.wants_export`)."""
    traces = otel_choice(env, "OTEL_TRACES_EXPORTER")
    base = env.get("OTEL_EXPORTER_OTLP_ENDPOINT", "").strip()
    traces_url = env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "").strip()
    if traces == "console":
        return OtelExporter(
            ConsoleSpanExporter(out=sys.stdout), _metric_reader(env, base), batch=True
        )
    protocol = otel_choice(env, "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") or otel_choice(
        env, "OTEL_EXPORTER_OTLP_PROTOCOL"
    )
    if protocol not in ("", "http/protobuf"):
        raise TelemetryUnavailableError(
            f"OTLP protocol {protocol!r} is not supported; use http/protobuf"
        )
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    url = traces_url or (f"{base.rstrip('/')}/v1/traces" if base else None)
    return OtelExporter(OTLPSpanExporter(endpoint=url), _metric_reader(env, base), batch=True)


def _metric_reader(env: Mapping[str, str], base: str) -> MetricReader | None:
    metrics = otel_choice(env, "OTEL_METRICS_EXPORTER") or ("otlp" if base else "none")
    if metrics == "console":
        return PeriodicExportingMetricReader(ConsoleMetricExporter(out=sys.stdout))
    if metrics != "otlp":
        return None
    from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter

    url = env.get("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "").strip() or (
        f"{base.rstrip('/')}/v1/metrics" if base else None
    )
    return PeriodicExportingMetricReader(OTLPMetricExporter(endpoint=url))
