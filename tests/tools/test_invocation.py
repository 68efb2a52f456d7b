"""Per-call data: every executor reads its own call, whatever runs beside it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from yagent.tools.adapter import Adapter, ToolContext
from yagent.tools.guard import WorkspaceGuard
from yagent.tools.surface import Surface, SurfaceOptions
from yagent.toolspec import Effect, Spec, Tier
from yagent.toolspec.builtin import BUILTIN
from yagent.toolspec.profiles import profile


def _surface(workspace: Path) -> Surface:
    look = Spec("srv__look", "Read-only lookup.", {"type": "object"}, Effect.READ, Tier.HOT)
    return Surface(
        BUILTIN,
        profile("coding"),
        WorkspaceGuard(workspace),
        external=[look],
        options=SurfaceOptions(deferred=False),
    )


@pytest.mark.anyio
async def test_parallel_calls_each_read_their_own_call_id(workspace: Path) -> None:
    surface = _surface(workspace)
    assert surface.is_parallelizable("srv__look")
    both_started = anyio.Event()
    started: list[str] = []
    seen: dict[str, str] = {}

    async def look(ctx: ToolContext, args: Any) -> dict[str, Any]:
        started.append(args["tag"])
        if len(started) == 2:
            both_started.set()
        await both_started.wait()  # both calls are in flight before either reads its id
        seen[args["tag"]] = ctx.call.call_id
        return {"ok": True}

    adapter = Adapter(ToolContext(workspace, surface), {"srv__look": look})
    with anyio.fail_after(30):
        async with anyio.create_task_group() as tg:
            tg.start_soon(adapter.call, "srv__look", {"tag": "first"}, "call-1")
            tg.start_soon(adapter.call, "srv__look", {"tag": "second"}, "call-2")
    assert seen == {"first": "call-1", "second": "call-2"}
