"""The terminal's pump (`Renderer.pump`): events drained in batches — shown in the order the
dispatcher gives them, one wake-up per burst — and a task waiting to run (the Ctrl-C handler)
gets its turn after at most one batch, however many events wait."""

from __future__ import annotations

import io
import json
from typing import Any

import anyio
import pytest

from yagent.cli import render
from yagent.cli.render import Renderer
from yagent.messaging import USER_HELP_NEEDED, USER_HELP_RESPONSE, Dispatcher, Event


class App:
    def __init__(self, maxsize: int = 4096) -> None:
        self.dispatcher = Dispatcher(maxsize=maxsize)
        self.confirm: Any = None


def lines(out: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.getvalue().splitlines()]


@pytest.mark.anyio
async def test_a_waiting_task_runs_after_one_batch_however_many_events_wait() -> None:
    """A task that becomes ready while the pump shows a backlog (as the signal handler's does at
    Ctrl-C) runs once that batch is shown — not after the whole backlog."""
    app = App()
    out = io.StringIO()
    total = 3 * render.BATCH + 5
    for n in range(total):
        app.dispatcher.send(Event("tool_call", {"n": n}))
    shown_when_it_ran: list[int] = []

    async def ctrl_c() -> None:
        shown_when_it_ran.append(len(out.getvalue().splitlines()))

    with anyio.fail_after(30):
        async with anyio.create_task_group() as tg:

            class Pressed(Renderer):
                def show(self, event: Event) -> None:
                    if event.payload.get("n") == 0:
                        tg.start_soon(ctrl_c)  # Ctrl-C pressed as the first event is shown
                    super().show(event)

            tg.start_soon(Pressed(json_mode=True, ask=None, out=out).pump, app)
            while len(out.getvalue().splitlines()) < total:
                await anyio.lowlevel.checkpoint()
            app.dispatcher.close()
    assert shown_when_it_ran == [render.BATCH]
    assert [line["n"] for line in lines(out)] == list(range(total))


@pytest.mark.anyio
async def test_a_burst_is_shown_in_order_and_a_question_answered_in_it() -> None:
    """Events published between the loop's awaits are shown in publish order — the question
    after the calls before it, though it travels on the critical queue — and answered (refused:
    no terminal), its answer routed back."""
    app = App()
    consumed: list[Event] = []

    class Confirm:
        def consume(self, event: Event) -> bool:
            consumed.append(event)
            return True

    app.confirm = Confirm()
    out = io.StringIO()
    renderer = Renderer(json_mode=True, ask=None, out=out)
    renderer.linger = 3600.0  # only the question (critical) may end the linger here

    with anyio.fail_after(30):
        async with anyio.create_task_group() as tg:
            tg.start_soon(renderer.pump, app)
            await anyio.lowlevel.checkpoint()
            for n in range(10):
                app.dispatcher.send(Event("tool_call", {"n": n}))
                await anyio.lowlevel.checkpoint()
            app.dispatcher.send(Event(USER_HELP_NEEDED, {"request_id": "r1", "tool": "x"}))
            while not consumed:
                await anyio.lowlevel.checkpoint()
            app.dispatcher.close()
    shown = lines(out)
    assert [line["type"] for line in shown] == [*["tool_call"] * 10, USER_HELP_NEEDED]
    assert [line["n"] for line in shown[:10]] == list(range(10))
    assert [e.type for e in consumed] == [USER_HELP_RESPONSE]
    assert consumed[0].payload["request_id"] == "r1"
