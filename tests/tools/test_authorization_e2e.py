"""The authorization loop end to end: the real
dispatcher, the real guard, the real surface and adapter; a scripted person answers."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.tools.conftest import make_surface
from yagent.kernel.judge import toolfail
from yagent.messaging import USER_HELP_NEEDED, Dispatcher, Event
from yagent.tools import flow
from yagent.tools.adapter import Adapter, ToolContext
from yagent.tools.confirm import Scope, UserConfirm, response

Person = Callable[[Event], Awaitable[Event | None]]


class Harness:
    def __init__(self, workspace: Path, home: Path) -> None:
        self.dispatcher = Dispatcher()
        self.confirm = UserConfirm(self.dispatcher)
        self.surface = make_surface(workspace, home)
        self.ran: list[dict[str, Any]] = []
        self.questions: list[Event] = []

        async def read_file(ctx: ToolContext, args: Any) -> dict[str, Any]:
            self.ran.append(args.model_dump())
            return {"path": args.path, "content": "x"}

        ctx = ToolContext(workspace, self.surface, confirm=self.confirm, delegation_id="d1")
        self.adapter = Adapter(ctx, {"read_file": read_file, "think": flow.think})

    async def ui(self, person: Person) -> None:
        """The display side: reads events, answers questions through the dispatcher."""
        while True:
            event = await self.dispatcher.receive()
            if event.type == USER_HELP_NEEDED:
                self.questions.append(event)
                answer = await person(event)
                if answer is not None:
                    self.dispatcher.send(answer)
            else:
                self.confirm.consume(event)


def answering(approved: bool, scope: Scope = Scope.ONCE) -> Person:
    async def person(event: Event) -> Event:
        return response(event.payload["request_id"], approved=approved, scope=scope)

    return person


async def run(h: Harness, person: Person, *calls: tuple[str, dict[str, Any]]) -> list[Any]:
    results: list[Any] = []
    async with anyio.create_task_group() as tg:
        tg.start_soon(h.ui, person)
        with anyio.fail_after(5):
            for name, args in calls:
                results.append(await h.adapter.call(name, json.dumps(args), f"c{len(results)}"))
        tg.cancel_scope.cancel()
    return results


@pytest.mark.anyio
async def test_approve_executes(workspace: Path, home: Path) -> None:
    h = Harness(workspace, home)
    [res] = await run(h, answering(True), ("read_file", {"path": "/etc/hostname"}))
    assert res.ok
    assert h.ran == [{"path": "/etc/hostname", "offset": 1, "limit": None}]
    assert len(h.questions) == 1
    assert h.questions[0].delegation_id == "d1"
    assert "outside the workspace" in h.questions[0].payload["reason"]


@pytest.mark.anyio
async def test_reject_is_fed_back_to_the_model(workspace: Path, home: Path) -> None:
    h = Harness(workspace, home)
    [res] = await run(h, answering(False), ("read_file", {"path": "/etc/hostname"}))
    assert not res.ok
    assert h.ran == []
    body = json.loads(res.content)
    assert body["kind"] == toolfail.Kind.PERMISSION.value
    assert "did not approve" in body["error"]
    assert body["retryable"] is False


@pytest.mark.anyio
async def test_session_level_skip(workspace: Path, home: Path) -> None:
    h = Harness(workspace, home)
    results = await run(
        h,
        answering(True, Scope.TOOL),
        ("read_file", {"path": "/etc/hostname"}),
        ("read_file", {"path": "/etc/os-release"}),
    )
    assert all(r.ok for r in results)
    assert len(h.questions) == 1, "the second call must not ask again"


@pytest.mark.anyio
async def test_project_scope_persists(workspace: Path, home: Path) -> None:
    h = Harness(workspace, home)
    await run(h, answering(True, Scope.PROJECT), ("read_file", {"path": "/etc/hostname"}))
    assert json.loads((home / "settings.json").read_text())["authorized_projects"]
    again = Harness(workspace, home)
    [res] = await run(again, answering(False), ("read_file", {"path": "/etc/hostname"}))
    assert res.ok
    assert again.questions == []


@pytest.mark.anyio
async def test_in_workspace_needs_no_question(workspace: Path, home: Path) -> None:
    h = Harness(workspace, home)
    [res] = await run(h, answering(False), ("read_file", {"path": "a.txt"}))
    assert res.ok
    assert h.questions == []


@pytest.mark.anyio
async def test_mismatched_request_id_is_ignored(workspace: Path, home: Path) -> None:
    h = Harness(workspace, home)

    async def confused(event: Event) -> Event | None:
        h.dispatcher.send(response("someone-else", approved=True))
        h.dispatcher.send(Event("assistant_text", {"request_id": event.payload["request_id"]}))
        await anyio.sleep(0.05)
        assert h.confirm.pending_ids() == (event.payload["request_id"],)
        return response(event.payload["request_id"], approved=False)

    [res] = await run(h, confused, ("read_file", {"path": "/etc/hostname"}))
    assert not res.ok, "the stray approval must not have answered the real question"
    assert h.confirm.ignored == 1


@pytest.mark.anyio
async def test_cancel_unblocks_the_waiting_tool(workspace: Path, home: Path) -> None:
    h = Harness(workspace, home)

    async def silent(event: Event) -> None:
        return None

    async with anyio.create_task_group() as tg:
        tg.start_soon(h.ui, silent)
        with anyio.move_on_after(0.2) as scope:
            await h.adapter.call("read_file", '{"path": "/etc/hostname"}', "c1")
        tg.cancel_scope.cancel()
    assert scope.cancelled_caught
    assert h.ran == []
    assert h.confirm.pending_ids() == ()


@pytest.mark.anyio
async def test_timeout_unblocks_with_a_refusal(workspace: Path, home: Path) -> None:
    dispatcher = Dispatcher()
    confirm = UserConfirm(dispatcher, timeout=0.05)
    answer = await confirm.ask("authorization", {"tool": "x"})
    assert not answer.approved
    assert answer.timed_out
    assert "no answer" in answer.text


@pytest.mark.anyio
async def test_no_person_attached_means_refusal(workspace: Path, home: Path) -> None:
    surface = make_surface(workspace, home)
    adapter = Adapter(ToolContext(workspace, surface), {"read_file": flow.think})
    res = await adapter.call("read_file", '{"path": "/etc/hostname"}', "c1")
    assert not res.ok
    body = json.loads(res.content)
    assert body["kind"] == "needs_approval"
    assert "nobody could be asked (this run has no person attached" in body["error"]
    assert "did not approve" not in body["error"], "nobody was asked, so nobody declined"
