"""The terminal's pump and the dispatcher's losses: `--json` attached (`Renderer.attach`) writes
every event once, as it is published, a question in a flood included and answered; the human
display says in a line how many events of which kind it did not show; and JSON lines read from
the queue (a detached writer) say it in a `dropped` line."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import anyio
import jsonschema
import pytest

from yagent.cli.render import Renderer
from yagent.messaging import USER_HELP_NEEDED, USER_HELP_RESPONSE, Dispatcher, Event

SCHEMA = Path(__file__).resolve().parents[2] / "docs" / "events.schema.json"


class App:
    def __init__(self, maxsize: int) -> None:
        self.dispatcher = Dispatcher(maxsize=maxsize)
        self.confirm: Any = None


class Confirm:
    def __init__(self) -> None:
        self.consumed: list[Event] = []

    def consume(self, event: Event) -> bool:
        self.consumed.append(event)
        return True


async def pumped(app: App, renderer: Renderer, flood: list[Event]) -> None:
    """`flood` sent at once (no await between), then the pump runs until the queue is empty."""
    for event in flood:
        app.dispatcher.send(event)
    with anyio.fail_after(30):
        async with anyio.create_task_group() as tg:
            tg.start_soon(renderer.pump, app)
            while any(app.dispatcher.pending()) or (
                app.confirm is not None and not app.confirm.consumed
            ):
                await anyio.lowlevel.checkpoint()
            app.dispatcher.close()


@pytest.mark.anyio
async def test_json_attached_writes_a_flood_whole_with_its_question_once() -> None:
    app = App(maxsize=8)
    app.confirm = Confirm()
    out = io.StringIO()
    renderer = Renderer(json_mode=True, ask=None, out=out)
    renderer.attach(app.dispatcher)
    flood = [Event("tool_result", {"n": n}) for n in range(50)]
    flood.insert(20, Event(USER_HELP_NEEDED, {"request_id": "r1", "tool": "x"}))
    await pumped(app, renderer, flood)
    renderer.rest(app.dispatcher)
    shown = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [line["type"] for line in shown] == [e.type for e in flood]
    assert [line.get("n") for line in shown] == [e.payload.get("n") for e in flood]
    assert [e.type for e in app.confirm.consumed] == [USER_HELP_RESPONSE]  # answered, not shown


@pytest.mark.anyio
async def test_the_human_display_says_what_it_dropped() -> None:
    app = App(maxsize=8)
    out = io.StringIO()
    renderer = Renderer(json_mode=False, ask=None, out=out)
    flood = [Event("tool_result", {"ok": True, "content": f"r{n}"}) for n in range(20)]
    flood += [Event("tool_call", {"name": "think"}) for _ in range(3)]
    await pumped(app, renderer, flood)
    text = out.getvalue()
    assert [line for line in text.splitlines() if line.startswith("  ← ")] == [
        f"  ← r{n}" for n in range(8)
    ]
    assert "display fell behind: not shown here: 3 tool_call, 12 tool_result event(s)" in text
    assert app.dispatcher.take_drops() == {}  # said once


@pytest.mark.anyio
async def test_json_read_from_the_queue_says_what_was_dropped_in_a_line() -> None:
    app = App(maxsize=4)
    out = io.StringIO()
    renderer = Renderer(json_mode=True, ask=None, out=out)  # not attached: a detached writer
    await pumped(app, renderer, [Event("tool_result", {"n": n}) for n in range(10)])
    shown = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [line.get("n") for line in shown[:4]] == [0, 1, 2, 3]
    assert shown[4:] == [{"type": "dropped", "counts": {"tool_result": 6}}]
    validator = jsonschema.Draft202012Validator(json.loads(SCHEMA.read_text()))
    assert not list(validator.iter_errors(shown[4]))  # a documented line (docs/events.schema.json)
    assert list(validator.iter_errors({"type": "dropped", "counts": {"tool_result": "6"}}))
