"""Streamed text through `delta` on the terminal, and the economy's visible lines."""

from __future__ import annotations

import io
import json

import pytest
from rich.console import Console

from yagent.agents.results import AgentResult, Status
from yagent.cli import economy_lines
from yagent.cli.render import Renderer
from yagent.cli.stream import StreamView
from yagent.kernel.context.protocol import parse_report
from yagent.llm import Usage
from yagent.messaging import Dispatcher, Event


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def now(self) -> float:
        return self.t


def view() -> tuple[StreamView, io.StringIO, Clock]:
    out = io.StringIO()
    clock = Clock()
    console = Console(file=out, highlight=False, soft_wrap=True, color_system=None)
    return StreamView(out, console, min_interval=1.0, clock=clock), out, clock


def test_increments_are_throttled_and_flushed_at_the_end_of_the_turn() -> None:
    stream, out, clock = view()
    stream.feed("Hel", "answer")
    assert out.getvalue() == "Hel", "the first increment shows at once"
    stream.feed("lo ", "answer")
    stream.feed("wor", "answer")
    assert out.getvalue() == "Hel"
    clock.t = 2.0
    stream.tick()
    assert out.getvalue() == "Hello wor"
    stream.feed("ld", "answer")
    stream.end_turn("Hello world")
    assert out.getvalue() == "Hello world\n"
    assert not stream.open


def test_reasoning_is_split_from_the_answer_also_across_increments() -> None:
    stream, out, clock = view()
    stream.feed("<thi", "answer")
    stream.feed("nk>pondering</think>The answer", "answer")
    clock.t = 5
    stream.tick()
    stream.feed("deep", "reasoning")
    stream.end_turn()
    text = out.getvalue()
    assert "<think>" not in text
    assert text.index("pondering") < text.index("The answer")
    assert "\nThe answer" in text, "a change of channel starts a new line"
    assert text.endswith("deep\n")


def test_an_authoritative_turn_corrects_superseded_deltas() -> None:
    stream, out, _ = view()
    stream.feed("first attempt", "answer")
    stream.end_turn("second attempt")
    assert "(corrected) second attempt" in out.getvalue()


def test_economy_events_have_visible_lines() -> None:
    done = economy_lines.line(
        "compaction",
        {
            "compacted": True,
            "archived": 9,
            "archive_ref": "archive:2",
            "tokens_before": 4000,
            "tokens_after": 2000,
        },
    )
    assert done is not None
    assert "context compacted: 9 messages" in done
    assert "archive:2" in done
    failed = economy_lines.line("compaction", {"compacted": False, "error": "model down"})
    assert failed is not None
    assert "failed: model down" in failed
    skipped = economy_lines.line("compaction_skipped", {"reason": "repeated", "detail": "same"})
    assert skipped is not None
    assert "repeated" in skipped
    memory = economy_lines.line(
        "memory",
        {
            "injected": ["a"],
            "dropped": [{"reason": "no_source"}],
            "out_of_scope": 1,
            "problems": ["bad file"],
        },
    )
    assert memory is not None
    assert "1 injected, 1 dropped (no_source), 1 out of scope; bad file" in memory
    refs = economy_lines.line(
        "session_ref",
        {
            "references": [
                {"resolved": True, "source": "abc", "state": "stale", "truncated": True},
                {"resolved": False, "reference": "zz", "why": "not found"},
            ]
        },
    )
    assert refs is not None
    assert "abc stale (cut); zz: not found" in refs
    assert economy_lines.line("report", {"note": "bad handoff"}) is not None
    assert economy_lines.line("report", {"note": ""}) is None
    assert economy_lines.line("context", {}) is None
    assert economy_lines.line("tool_call", {}) is None


def result(**overrides: object) -> AgentResult:
    fields: dict[str, object] = {
        "status": Status.FINISHED,
        "text": "",
        "deliverable": "## Deliverable",
        "exit_payload": None,
        "steps": 1,
        "messages": (),
        "usage": Usage(),
    }
    fields.update(overrides)
    return AgentResult(**fields)  # type: ignore[arg-type]


REPORT = json.dumps(
    {"agent": "repo", "status": "done", "summary": "Found it.", "confidence": "high"}
)


def test_final_shows_the_report_in_markdown_beside_the_deliverable() -> None:
    out = io.StringIO()
    renderer = Renderer(json_mode=False, ask=None, out=out)
    renderer.final("s" * 20, result(report=parse_report(REPORT)))
    text = out.getvalue()
    assert "Deliverable" in text
    assert "Report from repo" in text
    assert "Found it." in text


def test_a_report_deliverable_is_shown_once_as_markdown_and_in_json() -> None:
    out = io.StringIO()
    renderer = Renderer(json_mode=False, ask=None, out=out)
    renderer.final("s" * 20, result(deliverable=REPORT, report=parse_report(REPORT)))
    assert '"agent"' not in out.getvalue()
    assert "Report from repo" in out.getvalue()
    raw = io.StringIO()
    Renderer(json_mode=True, ask=None, out=raw).final(
        "s", result(report=parse_report(REPORT + "}"), report_note="")
    )
    line = json.loads(raw.getvalue())
    assert line["report"]["agent"] == "repo"
    assert line["report_repaired"] is False


@pytest.mark.anyio
async def test_the_pump_shows_waiting_text_while_no_event_arrives() -> None:
    out = io.StringIO()
    renderer = Renderer(json_mode=False, ask=None, out=out)
    renderer.stream_tick = 0.01

    class App:
        dispatcher = Dispatcher()
        confirm = None

    app = App()
    app.dispatcher.send(Event("assistant_delta", {"text": "a", "channel": "answer"}))
    app.dispatcher.send(Event("compaction", {"compacted": False, "error": "boom"}))
    app.dispatcher.close()
    await renderer.pump(app)
    assert "a\n" in out.getvalue()
    assert "boom" in out.getvalue()
