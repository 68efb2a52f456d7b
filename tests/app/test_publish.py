"""What one published event reaches, through a real App run: the session store, every observer
(telemetry's exporter and watchdog among them) and the terminal's queue — each exactly once, in
publish order, with the same content; the terminal never shows what pii masks.

These hold whatever the publish path does to be cheap (issue 17): an observer must get what is
stored, an exporter must export what the stored session replays to, and the display must be the
masked payload, never the raw one."""

from __future__ import annotations

import importlib
import io
import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from yagent.agents import catalog
from yagent.app.assemble import open_app
from yagent.app.config import load
from yagent.app.telemetry import WARNING_EVENT, Telemetry, exporter_from_env, project
from yagent.cli.render import Renderer
from yagent.llm.scripted import ScriptedEngine, call
from yagent.memory import SUB_AGENT_ACTIVITY
from yagent.messaging import Event

from .files import write
from .trace_events import troubled_session

MARKER = catalog.builtin("coding", 0).marker
MOBILE = "13912345678"
EMAIL = "li.lei@example.com"
pii_apply = importlib.import_module("yagent.kernel.confine.pii.apply")  # the module, not
# the function the package re-exports under the same name
ROLLOUT_ONLY = {SUB_AGENT_ACTIVITY, WARNING_EVENT}  # stored, neither shown nor observed


def script() -> list[Any]:
    thoughts = [f"call {MOBILE}", "plain", f"mail {EMAIL}"]
    steps = [
        call("think", json.dumps({"thought": t}), call_id=f"c{i}") for i, t in enumerate(thoughts)
    ]
    return [*steps, call("agent_exit", json.dumps({"reason": "done"}), call_id="cx")]


def plain(value: Any) -> Any:
    """A payload as JSON gives it back (the store keeps JSON: tuples come back as lists)."""
    return json.loads(json.dumps(value))


def spans(exporter: InMemorySpanExporter) -> list[tuple[str, dict[str, Any]]]:
    """Span names and attributes, without ids and times (a replay has its own)."""
    return [
        (s.name, {k: v for k, v in (s.attributes or {}).items() if "time" not in k})
        for s in exporter.get_finished_spans()
    ]


@pytest.mark.anyio
async def test_every_event_reaches_store_observers_and_display_alike(tmp_path: Path) -> None:
    home, ws = tmp_path / "home", tmp_path / "ws"
    ws.mkdir()
    write(home / "config.toml", '[pii]\nlog = "mask"\ndisplay = "mask"\n')
    engine = ScriptedEngine({"coding": script()}, markers={"coding": MARKER})
    live_spans, replay_spans = InMemorySpanExporter(), InMemorySpanExporter()
    first: list[Event] = []
    second: list[Event] = []
    async with open_app(
        load(home=home, workspace=ws, env={}),
        home=home,
        workspace=ws,
        interactive=False,
        engine=engine,
    ) as app:
        info = app.store.create_session(workspace=str(ws), title="go", meta={"agent": "coding"})
        live = Telemetry(info.id, sink=exporter_from_env({}, span_exporter=live_spans))
        app.observers.extend([first.append, live.observe_event, second.append])
        _, result = await app.run("go", agent_name="coding", session_id=info.id)
        live.close()
        shown: list[Event] = []
        while (event := app.dispatcher.receive_nowait()) is not None:
            shown.append(event)
        stored = app.store.events(info.id)
    assert result.status.value == "finished", result.error

    # every observer gets every event once, in publish order, as the store keeps it
    observed = [(e.type, plain(e.payload)) for e in first]
    assert [(e.type, plain(e.payload)) for e in second] == observed
    assert [e.delegation_id for e in first] == [e.delegation_id for e in second]
    kept = [(e.type, plain(e.payload)) for e in stored]
    assert [k for k in kept if k[0] not in ROLLOUT_ONLY] == observed
    assert [e.seq for e in stored] == sorted(e.seq for e in stored)
    assert {"model_request", "assistant_turn", "tool_call", "tool_result", "run_end"} <= {
        t for t, _ in observed
    }

    # the log surface masked: neither the store nor an observer holds the raw text
    for text in (MOBILE, EMAIL):
        assert text not in json.dumps(observed)
        assert text not in json.dumps(kept)

    # the terminal gets the same events in the same order, masked for the display
    assert [e.type for e in shown if e.type != "assistant_delta"] == [t for t, _ in observed]
    for event in shown:
        assert MOBILE not in json.dumps(event.payload)
        assert EMAIL not in json.dumps(event.payload)

    # the exporter exports what the stored session replays to; the watchdog judges alike
    replay = Telemetry(info.id, sink=exporter_from_env({}, span_exporter=replay_spans))
    for record in stored:
        replay.observe(record.type, record.payload, ts=record.ts, seq=record.seq)
    replay.close()
    assert spans(live_spans)
    assert spans(live_spans) == spans(replay_spans)
    assert live.projection().findings == project(stored).findings
    assert [r.id for r in live.projection().turns[0].rows] == [
        r.id for r in project(stored).turns[0].rows
    ]


def test_a_telemetry_without_rows_warns_exactly_as_one_with_rows() -> None:
    """The app keeps no rows when nothing exports them; its watchdog must not notice: the same
    findings, in the same order, at the same events, and the same ones when the turn closes."""
    events = [*troubled_session(), *troubled_session()[:2]]  # the last turn left open
    seen: dict[bool, list[tuple[int, Any]]] = {}
    for rows in (True, False):
        warned: list[Any] = []
        tel = Telemetry("s", rows=rows, on_warning=warned.append)
        found = [
            (n, f)
            for n, e in enumerate(events)
            for f in tel.observe(e.type, e.payload, ts=e.ts, seq=e.seq)
        ]
        closing = tel.close()
        assert [f for _, f in found] + list(closing) == warned
        seen[rows] = [*found, *((-1, f) for f in closing)]
    assert any(n >= 0 for n, _ in seen[True])
    assert any(n < 0 for n, _ in seen[True])
    assert seen[False] == seen[True]


def test_a_telemetry_without_rows_refuses_to_project_or_export() -> None:
    tel = Telemetry("s", rows=False)
    with pytest.raises(ValueError, match="keeps no rows"):
        tel.projection()
    with pytest.raises(ValueError, match="keeps no rows"):
        _ = tel.trajectory
    with pytest.raises(ValueError, match="nothing to export"):
        Telemetry("s", rows=False, sink=exporter_from_env({}, span_exporter=InMemorySpanExporter()))


@pytest.mark.anyio
async def test_the_apps_own_exporter_exports_what_the_stored_session_replays_to(
    tmp_path: Path,
) -> None:
    home, ws = tmp_path / "home", tmp_path / "ws"
    ws.mkdir()
    engine = ScriptedEngine({"coding": script()}, markers={"coding": MARKER})
    exported, replayed = InMemorySpanExporter(), InMemorySpanExporter()
    async with open_app(
        load(home=home, workspace=ws, env={}),
        home=home,
        workspace=ws,
        interactive=False,
        engine=engine,
    ) as app:
        app.otel_sink = exporter_from_env({}, span_exporter=exported)
        session_id, result = await app.run("go", agent_name="coding")
        stored = app.store.events(session_id)
    assert result.status.value == "finished", result.error
    replay = Telemetry(session_id, sink=exporter_from_env({}, span_exporter=replayed))
    for record in stored:
        replay.observe(record.type, record.payload, ts=record.ts, seq=record.seq)
    replay.close()
    assert spans(exported)
    assert spans(exported) == spans(replayed)


@pytest.mark.anyio
async def test_an_observer_cannot_change_what_the_display_shows(tmp_path: Path) -> None:
    """The display's payload is its own: an observer that edits what it was given (it must not,
    but a bug might) does not change the terminal's copy — also when both surfaces' policies act
    alike and the payload is judged once for both."""
    home, ws = tmp_path / "home", tmp_path / "ws"
    ws.mkdir()
    write(home / "config.toml", '[pii]\nlog = "mask"\ndisplay = "mask"\n')
    engine = ScriptedEngine({"coding": script()}, markers={"coding": MARKER})
    async with open_app(
        load(home=home, workspace=ws, env={}),
        home=home,
        workspace=ws,
        interactive=False,
        engine=engine,
    ) as app:

        def meddle(event: Event) -> None:
            if isinstance(event.payload, dict):
                event.payload["meddled"] = True

        app.observers.append(meddle)
        await app.run("go", agent_name="coding")
        shown: list[Event] = []
        while (event := app.dispatcher.receive_nowait()) is not None:
            shown.append(event)
    assert shown
    assert not any("meddled" in e.payload for e in shown)


@pytest.mark.parametrize(
    ("log", "display"), [("block", "mask"), ("mask", "off"), ("off", "mask"), ("mask", "mask")]
)
@pytest.mark.anyio
async def test_an_event_without_personal_data_is_scanned_once_for_both_surfaces(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, log: str, display: str
) -> None:
    """Whatever the two surfaces' actions, a clean payload is judged with one scan (the whole
    payload's texts, once) and reaches the store, the observers and the display unchanged; a
    payload with personal data is still judged by each surface's own policy."""
    home, ws = tmp_path / "home", tmp_path / "ws"
    ws.mkdir()
    write(home / "config.toml", f'[pii]\nlog = "{log}"\ndisplay = "{display}"\n')
    scans: list[str] = []
    real_scan = pii_apply.scan

    def counted(text: str, *args: Any, **kwargs: Any) -> Any:
        scans.append(text)
        return real_scan(text, *args, **kwargs)

    engine = ScriptedEngine({"coding": [call("think", "{}")]}, markers={"coding": MARKER})
    async with open_app(
        load(home=home, workspace=ws, env={}),
        home=home,
        workspace=ws,
        interactive=False,
        engine=engine,
    ) as app:
        session_id = app.store.create_session(workspace=str(ws), title="t").id
        observed: list[Event] = []
        app.observers.append(observed.append)
        monkeypatch.setattr(pii_apply, "scan", counted)
        payload = {"text": "nothing personal here, 42 times", "n": 7, "tags": ["a", "b"]}
        app.sessions.open(session_id).publish("note", payload)
        assert len(scans) == 1
        app.sessions.open(session_id).publish("note", {"text": f"call {MOBILE}", "n": 1})
        monkeypatch.undo()
        shown = []
        while (event := app.dispatcher.receive_nowait()) is not None:
            shown.append(event)
        stored = [e.payload for e in app.store.events(session_id) if e.type == "note"]
    assert shown[0].payload == payload
    assert observed[0].payload == payload
    assert stored[0] == payload
    masked = {"text": "call [MOBILE]", "n": 1}
    raw = {"text": f"call {MOBILE}", "n": 1}
    assert shown[1].payload == (raw if display == "off" else masked)
    if log != "block":
        assert stored[1] == observed[1].payload == (raw if log == "off" else masked)
    else:
        assert str(stored[1]["text"]).startswith("[withheld: contains personal data (mobile)")


@pytest.mark.anyio
async def test_the_terminals_pump_shows_every_event_in_publish_order_and_masked(
    tmp_path: Path,
) -> None:
    """The CLI's own consumer (`Renderer.pump`, draining in batches) running beside a real run:
    every event observed is shown, in publish order; streamed text (the number and the address
    cut across deltas) is shown masked, never a raw piece."""
    home, ws = tmp_path / "home", tmp_path / "ws"
    ws.mkdir()
    write(home / "config.toml", '[pii]\nlog = "mask"\ndisplay = "mask"\n')
    texts = [f"Reach me at {MOBILE} today.\n", "plain words\n", f"or write to {EMAIL} now.\n"]
    steps = [
        call("think", json.dumps({"thought": "t"}), call_id=f"c{i}", text=t)
        for i, t in enumerate(texts)
    ]
    steps.append(call("agent_exit", json.dumps({"reason": "done"}), call_id="cx"))
    engine = ScriptedEngine({"coding": steps}, markers={"coding": MARKER})
    out = io.StringIO()
    renderer = Renderer(json_mode=True, ask=None, out=out)
    observed: list[Event] = []
    async with open_app(
        load(home=home, workspace=ws, env={}),
        home=home,
        workspace=ws,
        interactive=False,
        engine=engine,
    ) as app:
        app.observers.append(observed.append)
        async with anyio.create_task_group() as tg:
            tg.start_soon(renderer.pump, app)
            _, result = await app.run("go", agent_name="coding")
            tg.cancel_scope.cancel()
        while (event := app.dispatcher.next_in_order()) is not None:
            renderer.show(event)  # what was published after the pump stopped, as the CLI does
    assert result.status.value == "finished", result.error
    shown = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [s["type"] for s in shown if s["type"] != "assistant_delta"] == [
        e.type for e in observed
    ]
    streamed = "".join(s["text"] for s in shown if s["type"] == "assistant_delta")
    assert "[MOBILE]" in streamed
    assert "[EMAIL]" in streamed
    for raw in (MOBILE, MOBILE[:7], MOBILE[-7:], EMAIL, "li.lei@", "example.com"):
        assert raw not in out.getvalue(), raw
