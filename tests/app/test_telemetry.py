"""Telemetry: yagent's events → trajectory + watchdog → OpenTelemetry (in-memory SDK exporter)."""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from yagent.agents import catalog
from yagent.app import otelexport
from yagent.app.assemble import open_app
from yagent.app.config import load
from yagent.app.otelenv import TelemetryUnavailableError, wants_export
from yagent.app.telemetry import VOCABULARY, Telemetry, enrich, exporter_from_env, project
from yagent.cli.demo import SCRIPT, TASK, prepare
from yagent.kernel.trace.trajectory import FORBIDDEN_LABELS, Pairing, label_violations
from yagent.kernel.trace.watchdog import FindingKind
from yagent.llm.pricing import DEFAULT_PRICES, PriceTable
from yagent.llm.scripted import ScriptedEngine
from yagent.tools.yolo import Yolo

from .trace_events import Recorder, troubled_session

DEMO = Path(__file__).resolve().parents[2] / "demo"


def exported(
    events: Any, **kwargs: Any
) -> tuple[list[ReadableSpan], InMemoryMetricReader, Telemetry]:
    spans, reader = InMemorySpanExporter(), InMemoryMetricReader()
    sink = exporter_from_env({}, span_exporter=spans, metric_reader=reader)
    tel = Telemetry("sess-42", sink=sink, **kwargs)
    for e in events:
        tel.observe(e.type, e.payload, ts=e.ts, seq=e.seq)
    tel.close()
    return list(spans.get_finished_spans()), reader, tel


def test_the_vocabulary_knows_every_event_the_loop_publishes() -> None:
    published = {
        "model_request",
        "assistant_delta",
        "assistant_turn",
        "tool_call",
        "tool_result",
        "reminder",
        "run_end",
    }
    known = set(VOCABULARY.rules) | VOCABULARY.ignored
    assert published <= known
    assert "delegation_start" in VOCABULARY.rules


def test_project_replays_a_recorded_session_into_turns_and_findings() -> None:
    p = project(troubled_session())
    assert p.events == 27
    assert p.unrecognised == 0
    first, second = p.turns
    assert first.closed
    assert second.closed
    assert first.attrs["status"] == "finished"
    s = first.summary
    assert (s.steps, s.calls, s.spans) == (3, 6, 1)
    assert (s.missing_result, s.unpaired_result, s.failed) == (1, 1, 2)
    assert first.row("call:d1/k1").pairing is Pairing.MISSING_RESULT  # type: ignore[union-attr]
    assert first.row("span:d1").parent_id == "call:/c4"  # type: ignore[union-attr]
    assert first.row("step:d1/1").parent_id == "span:d1"  # type: ignore[union-attr]
    assert first.row("call:/c3").outcome == "timeout"  # type: ignore[union-attr]
    kinds = {(f.kind, f.call) for f in p.findings[0]}
    assert kinds == {
        (FindingKind.DECLARED_NOT_EXECUTED, "call:/c5"),
        (FindingKind.RESULT_WITHOUT_DECLARATION, "call:d1/zz"),
    }
    assert p.findings[1] == ()
    assert second.row("call:/c1").name == "agent_exit"  # type: ignore[union-attr]


def test_a_session_that_stopped_mid_turn_still_gets_its_steps_judged() -> None:
    r = Recorder()
    r.step(0, 1, 1, [("c1", "read_file", {})])
    p = project(r.events)
    assert not p.turns[0].closed
    assert [f.kind for f in p.findings[0]] == [FindingKind.DECLARED_NOT_EXECUTED]


def test_enrich_prices_model_calls_only_when_the_price_is_known() -> None:
    usage = {
        "input_tokens": 1_000_000,
        "output_tokens": 0,
        "cache_read_tokens": 0,
        "cache_write_tokens": 0,
        "junk": 5,
    }
    priced = enrich("assistant_turn", {"model": "gpt-4o", "usage": usage}, DEFAULT_PRICES)
    assert priced["cost"] == pytest.approx(2.5)
    unpriced = enrich("assistant_turn", {"model": "mystery", "usage": usage}, DEFAULT_PRICES)
    assert "cost" not in unpriced
    bad = enrich(
        "assistant_turn", {"model": "gpt-4o", "usage": {"input_tokens": "lots"}}, DEFAULT_PRICES
    )
    assert bad["cost"] == 0.0
    assert "cost" not in enrich("assistant_turn", {"model": "gpt-4o"}, PriceTable({}))
    given = {"model": "gpt-4o", "usage": usage, "cost": 9.0}
    assert enrich("assistant_turn", given, DEFAULT_PRICES) is given


def test_enrich_says_whether_a_run_failed_and_never_guesses_an_unknown_status() -> None:
    assert enrich("run_end", {"status": "finished"}, DEFAULT_PRICES)["ok"] is True
    assert enrich("run_end", {"status": "idle_timeout"}, DEFAULT_PRICES)["ok"] is False
    assert "ok" not in enrich("run_end", {"status": "weird"}, DEFAULT_PRICES)
    assert enrich("tool_call", {"x": 1}, DEFAULT_PRICES) == {"x": 1}


def test_one_trace_per_turn_with_the_span_tree_of_the_projection() -> None:
    spans, _, _ = exported(troubled_session())
    traces = {s.context.trace_id for s in spans}
    assert len(traces) == 2
    roots = [s for s in spans if s.parent is None]
    assert len(roots) == 2
    first_trace = (
        roots[0].context.trace_id
        if roots[0].start_time < roots[1].start_time
        else roots[1].context.trace_id
    )
    first = {
        s.attributes.get("yagent.row.id", "turn"): s
        for s in spans
        if s.context.trace_id == first_trace
    }
    assert len(first) == 11  # root + 3 steps + 6 calls + 1 delegation

    def parent_of(row: str) -> str:
        parent = first[row].parent
        assert parent is not None
        match = [k for k, s in first.items() if s.context.span_id == parent.span_id]
        return match[0]

    assert parent_of("step:/1") == "turn"
    assert parent_of("call:/c1") == "step:/1"
    assert parent_of("span:d1") == "call:/c4"
    assert parent_of("step:d1/1") == "span:d1"
    assert parent_of("call:d1/k1") == "step:d1/1"
    root = first["turn"]
    assert root.name == "invoke_workflow coding"
    assert root.attributes["gen_ai.conversation.id"] == "sess-42"
    assert root.end_time - root.start_time == 7_500_000_000


def test_spans_carry_genai_attributes_usage_cost_and_status() -> None:
    spans, _, _ = exported(troubled_session())
    by_row = {
        s.attributes.get("yagent.row.id"): s for s in spans if s.attributes.get("yagent.row.id")
    }
    step = next(s for s in spans if s.attributes.get("yagent.row.id") == "step:/1")
    assert step.name == "chat gpt-4o"
    assert step.kind is SpanKind.CLIENT
    assert step.attributes["gen_ai.operation.name"] == "chat"
    assert step.attributes["gen_ai.request.model"] == "gpt-4o"
    assert step.attributes["gen_ai.usage.input_tokens"] == 1200
    assert step.attributes["gen_ai.usage.output_tokens"] == 80
    assert step.attributes["yagent.cost.usd"] == pytest.approx((1200 * 2.5 + 80 * 10) / 1e6)
    timeout = by_row["call:/c3"]
    assert timeout.name == "execute_tool run_bash"
    assert timeout.kind is SpanKind.INTERNAL
    assert timeout.status.status_code is StatusCode.ERROR
    assert timeout.attributes["error.type"] == "timeout"
    assert timeout.attributes["gen_ai.tool.call.id"] == "c3"
    missing = by_row["call:d1/k1"]
    assert missing.attributes["yagent.pairing"] == "missing_result"
    assert missing.attributes["yagent.timing"] == "open"
    delegation = by_row["span:d1"]
    assert delegation.name == "invoke_agent repo"
    assert delegation.attributes["yagent.run.status"] == "finished"
    assert delegation.status.status_code is StatusCode.UNSET  # the sub-run ended well
    unpriced = next(s for s in spans if s.name == "chat unpriced-model")
    assert "yagent.cost.usd" not in unpriced.attributes  # unknown price: absent, not zero


def test_watchdog_warnings_are_span_events_and_reach_the_host() -> None:
    warned: list[str] = []
    spans, _, tel = exported(troubled_session(), on_warning=lambda f: warned.append(f.call))
    assert sorted(warned) == ["call:/c5", "call:d1/zz"]
    events = {(e.name, e.attributes["yagent.row.id"]) for s in spans for e in s.events}
    assert events == {
        ("yagent.watchdog.declared_not_executed", "call:/c5"),
        ("yagent.watchdog.result_without_declaration", "call:d1/zz"),
    }
    assert tel.projection().findings[0]


def test_no_forbidden_label_reaches_a_metric_point() -> None:
    _, reader, _ = exported(troubled_session())
    data = reader.get_metrics_data()
    points: dict[str, list[dict[str, Any]]] = {}
    for rm in data.resource_metrics:
        for sm in rm.scope_metrics:
            for metric in sm.metrics:
                points[metric.name] = [dict(p.attributes) for p in metric.data.data_points]
    assert {
        "gen_ai.client.operation.duration",
        "gen_ai.client.token.usage",
        "yagent.cost.usd",
    } <= set(points)
    for name, attrs_list in points.items():
        for attrs in attrs_list:
            assert not set(attrs) & FORBIDDEN_LABELS, (name, attrs)
            assert label_violations(attrs) == (), (name, attrs)
    token_types = {a["gen_ai.token.type"] for a in points["gen_ai.client.token.usage"]}
    assert token_types == {"input", "output"}
    models = {a.get("gen_ai.request.model") for a in points["yagent.cost.usd"]}
    assert models == {"gpt-4o", "claude-haiku-4-5"}


def test_each_turn_is_exported_once_and_an_open_turn_on_close() -> None:
    spans_exp = InMemorySpanExporter()
    sink = exporter_from_env({}, span_exporter=spans_exp)
    tel = Telemetry("s", sink=sink)
    r = Recorder()
    r.step(0, 1, 1, [])
    r.end(2)
    r.end(3)  # a duplicate turn end exports nothing more
    r.step(10, 11, 1, [("c9", "read_file", {})])
    r.call(12, 1, "c9", "read_file", {})
    for e in r.events:
        tel.observe(e.type, e.payload, ts=e.ts)
    assert len({s.context.trace_id for s in spans_exp.get_finished_spans()}) == 1
    tel.close()
    tel.close()
    spans = spans_exp.get_finished_spans()
    assert len({s.context.trace_id for s in spans}) == 2
    open_root = next(
        s for s in spans if s.parent is None and s.attributes["yagent.turn.index"] == 1
    )
    assert open_root.attributes["yagent.turn.closed"] is False
    sink.shutdown()  # type: ignore[union-attr]


def test_close_judges_the_open_steps_and_tells_the_host() -> None:
    warned: list[str] = []
    tel = Telemetry("s", on_warning=lambda f: warned.append(f.call))
    r = Recorder()
    r.step(0, 1, 1, [("c1", "read_file", {})])
    for e in r.events:
        assert tel.observe(e.type, e.payload, ts=e.ts) == ()
    assert [f.call for f in tel.close()] == ["call:/c1"]
    assert warned == ["call:/c1"]
    assert tel.projection().findings[0][0].kind is FindingKind.DECLARED_NOT_EXECUTED


def test_without_a_sink_telemetry_still_projects_and_warns() -> None:
    tel = Telemetry("s")
    for e in troubled_session():
        tel.observe(e.type, e.payload, ts=e.ts)
    assert tel.trajectory.events == 27
    assert len(tel.projection().turns) == 2


@pytest.mark.parametrize(
    ("env", "wanted"),
    [
        ({}, False),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1"}, True),
        ({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:1/v1/traces"}, True),
        ({"OTEL_TRACES_EXPORTER": "console"}, True),
        ({"OTEL_TRACES_EXPORTER": "otlp"}, True),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://x", "OTEL_SDK_DISABLED": "TRUE"}, False),
        ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://x", "OTEL_TRACES_EXPORTER": "none"}, False),
        ({"OTEL_SERVICE_NAME": "yagent"}, False),
    ],
)
def test_export_follows_the_standard_variables(env: dict[str, str], wanted: bool) -> None:
    assert wants_export(env) is wanted
    sink = exporter_from_env(env)
    assert (sink is not None) is wanted
    if sink is not None:
        sink.shutdown()


def test_grpc_is_refused_not_silently_swapped() -> None:
    env = {
        "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1",
        "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",
    }
    with pytest.raises(TelemetryUnavailableError, match="grpc"):
        exporter_from_env(env)


def test_asked_for_export_without_the_sdk_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import yagent.app

    monkeypatch.delitem(sys.modules, "yagent.app.otelexport")
    monkeypatch.delattr(yagent.app, "otelexport")
    monkeypatch.setitem(sys.modules, "opentelemetry.sdk.trace", None)  # the extra is missing
    with pytest.raises(TelemetryUnavailableError, match=r"yagent\[otel\]"):
        exporter_from_env({"OTEL_TRACES_EXPORTER": "otlp"})
    assert exporter_from_env({}) is None  # nothing asked: nothing needed


class _Collector(BaseHTTPRequestHandler):
    received: ClassVar[list[tuple[str, str, int]]] = []

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.received.append((self.path, self.headers.get("Content-Type", ""), len(body)))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        return


@pytest.fixture
def collector() -> Iterator[str]:
    _Collector.received = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Collector)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_otlp_http_export_reaches_a_local_collector(collector: str) -> None:
    sink = exporter_from_env({"OTEL_EXPORTER_OTLP_ENDPOINT": collector})
    assert isinstance(sink, otelexport.OtelExporter)
    tel = Telemetry("sess", sink=sink)
    for e in troubled_session():
        tel.observe(e.type, e.payload, ts=e.ts)
    sink.flush()
    sink.shutdown()
    paths = {p for p, _, _ in _Collector.received}
    assert "/v1/traces" in paths
    assert "/v1/metrics" in paths
    assert all(ct == "application/x-protobuf" and n > 0 for _, ct, n in _Collector.received)


def test_console_exporter_prints_spans(capsys: pytest.CaptureFixture[str]) -> None:
    sink = exporter_from_env(
        {"OTEL_TRACES_EXPORTER": "console", "OTEL_METRICS_EXPORTER": "console"}
    )
    assert sink is not None
    Telemetry("s", sink=sink).close()  # nothing fed: nothing to export
    tel = Telemetry("s", sink=sink)
    for e in troubled_session()[-5:]:
        tel.observe(e.type, e.payload, ts=e.ts)
    sink.shutdown()
    out = capsys.readouterr().out
    assert "execute_tool agent_exit" in out
    assert "gen_ai.client.token.usage" in out


@pytest.mark.slow
@pytest.mark.anyio
async def test_live_telemetry_on_a_real_app_run(tmp_path: Path) -> None:
    """The real loop, tools and store; telemetry as an app observer; spans in memory."""
    workspace = prepare(DEMO / "project", tmp_path)
    home = tmp_path / "home"
    engine = ScriptedEngine(
        {"coding": SCRIPT}, markers={"coding": catalog.builtin("coding", 0).marker}
    )
    spans_exp = InMemorySpanExporter()
    async with open_app(
        load(home=home, workspace=workspace),
        home=home,
        workspace=workspace,
        yolo=Yolo.YOLO,
        interactive=False,
        engine=engine,
    ) as app:
        info = app.store.create_session(
            workspace=str(workspace), title=TASK, meta={"agent": "coding"}
        )
        tel = Telemetry(info.id, sink=exporter_from_env({}, span_exporter=spans_exp))
        app.observers.append(tel.observe_event)
        _, result = await app.run(TASK, agent_name="coding", session_id=info.id)
        recorded = project(app.store.events(info.id))
    assert result.status.value == "finished"
    spans = spans_exp.get_finished_spans()
    assert len({s.context.trace_id for s in spans}) == 1
    tools = [s.attributes["gen_ai.tool.name"] for s in spans if s.name.startswith("execute_tool")]
    assert sorted(tools) == sorted(
        [
            "list_dir",
            "read_file",
            "read_file",
            "run_bash",
            "search_replace_in_file",
            "run_bash",
            "agent_exit",
        ]
    )
    assert all(
        s.attributes["yagent.pairing"] == "paired"
        for s in spans
        if s.name.startswith("execute_tool")
    )
    assert tel.projection().findings == ((),)
    live, stored = tel.projection().turns[0], recorded.turns[0]
    assert [r.id for r in live.rows] == [r.id for r in stored.rows]


def test_the_tracing_docs_list_every_declared_attribute_and_its_label_rule() -> None:
    from yagent.kernel.trace.trajectory import ATTR_SPECS

    doc = (Path(__file__).resolve().parents[2] / "docs" / "tracing.md").read_text("utf-8")
    rows = {
        line.split("|")[1].strip(" `"): line for line in doc.splitlines() if line.startswith("| `")
    }
    for spec in ATTR_SPECS:
        assert spec.name in rows, spec.name
        cells = [c.strip() for c in rows[spec.name].split("|")]
        label = "forbidden" if spec.name in FORBIDDEN_LABELS else ("yes" if spec.label else "no")
        assert cells[6] == label, spec.name
