"""Tracing a real session: the projector's rows (program calls as children of the program
call), `yagent trace` in the terminal and as HTML, and the OpenTelemetry export wired into runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from yagent.agents import catalog
from yagent.app import assemble
from yagent.app.assemble import open_app
from yagent.app.config import load
from yagent.app.telemetry import exporter_from_env, project
from yagent.cli import main
from yagent.cli.demo import prepare
from yagent.llm.scripted import ScriptedEngine, call
from yagent.tools.yolo import Yolo

DEMO = Path(__file__).resolve().parents[2] / "demo"
PROGRAM = "const a = await host.list_dir('.'); const b = await host.read_file('calc.py'); return 2;"


@pytest.mark.anyio
async def test_trace_of_a_session_with_a_program(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    workspace = prepare(DEMO / "project", tmp_path)
    home = tmp_path / "home"
    monkeypatch.setenv("YAGENT_HOME", str(home))
    spans = InMemorySpanExporter()
    monkeypatch.setattr(
        assemble, "exporter_from_env", lambda: exporter_from_env({}, span_exporter=spans)
    )
    script = [
        call("run_program", json.dumps({"program": PROGRAM}), call_id="p1"),
        call("agent_exit", json.dumps({"reason": "done"}), call_id="x1"),
    ]
    engine = ScriptedEngine(
        {"coding": script}, markers={"coding": catalog.builtin("coding", 0).marker}
    )
    async with open_app(
        load(home=home, workspace=workspace),
        home=home,
        workspace=workspace,
        yolo=Yolo.YOLO,
        interactive=False,
        engine=engine,
    ) as app:
        sid, result = await app.run("count things", agent_name="coding")
        events = app.store.events(sid)
    assert result.status.value == "finished"
    projection = project(events)
    rows = {row.id: row for turn in projection.turns for row in turn.rows}
    children = [r for r in rows.values() if r.parent_id and r.parent_id.endswith("p1")]
    assert sorted(r.name for r in children) == ["list_dir", "read_file"]
    assert all(r.ok for r in children)
    assert all(not found for found in projection.findings), projection.findings
    names = {s.name for s in spans.get_finished_spans()}
    assert any("run_program" in n for n in names), names
    assert main(["trace", sid[:12]]) == 0
    out = capsys.readouterr().out
    assert "run_program" in out
    assert "list_dir" in out
    html = tmp_path / "t.html"
    assert main(["trace", sid[:12], "--html", str(html)]) == 0
    assert "<html" in html.read_text().lower()
