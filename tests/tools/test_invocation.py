"""Per-call data: every executor reads its own call, whatever runs beside it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from yagent.tools.adapter import Adapter, ToolContext
from yagent.tools.guard import WorkspaceGuard
from yagent.tools.invocation import MissingServiceError, Slot, needs
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


LOOKUP: Slot[str] = Slot("lookup")
CACHE: Slot[str] = Slot("cache")
ELSEWHERE: Slot[str] = Slot("elsewhere")


def _adapter(workspace: Path, look: Any) -> Adapter:
    ctx = ToolContext(workspace, _surface(workspace))
    ctx.services.put(LOOKUP, "the lookup")
    ctx.services.put(ELSEWHERE, "not for srv__look")
    return Adapter(ctx, {"srv__look": look})


@pytest.mark.anyio
async def test_an_executor_reads_what_it_declared_and_fills_its_optional_slot(
    workspace: Path,
) -> None:
    seen: list[tuple[str | None, str | None]] = []

    @needs(LOOKUP, optional=(CACHE,))
    async def look(ctx: ToolContext, args: Any) -> dict[str, Any]:
        seen.append((ctx.services.get(LOOKUP), ctx.services.get(CACHE)))
        ctx.services.put(CACHE, "filled")
        return {"ok": True}

    adapter = _adapter(workspace, look)
    assert (await adapter.call("srv__look", {}, "c1")).ok
    assert (await adapter.call("srv__look", {}, "c2")).ok
    assert seen == [("the lookup", None), ("the lookup", "filled")]  # the run's values, shared
    assert adapter.ctx.services.get(CACHE) == "filled"


@pytest.mark.anyio
@pytest.mark.parametrize("how", ["get", "put", "in"])
async def test_reaching_for_an_undeclared_service_is_an_error_naming_tool_and_slot(
    workspace: Path, how: str
) -> None:
    @needs(LOOKUP)
    async def look(ctx: ToolContext, args: Any) -> dict[str, Any]:
        if how == "get":
            return {"got": ctx.services.get(ELSEWHERE)}
        if how == "in":
            return {"got": ELSEWHERE in ctx.services}
        ctx.services.put(ELSEWHERE, "overwritten")
        return {}

    adapter = _adapter(workspace, look)
    result = await adapter.call("srv__look", {}, "c1")
    assert not result.ok
    assert "UndeclaredServiceError" in result.content
    assert "'srv__look'" in result.content
    assert "'elsewhere'" in result.content
    assert adapter.ctx.services.get(ELSEWHERE) == "not for srv__look"  # nothing was written


@pytest.mark.anyio
async def test_an_executor_that_declares_nothing_reaches_no_service(workspace: Path) -> None:
    async def look(ctx: ToolContext, args: Any) -> dict[str, Any]:
        return {"got": ctx.services.get(LOOKUP)}

    result = await _adapter(workspace, look).call("srv__look", {}, "c1")
    assert not result.ok
    assert "'lookup'" in result.content


def test_a_granted_tools_missing_required_service_is_an_error_before_any_call(
    workspace: Path,
) -> None:
    @needs(LOOKUP, CACHE, optional=(ELSEWHERE,))
    async def look(ctx: ToolContext, args: Any) -> dict[str, Any]:
        return {}

    adapter = Adapter(ToolContext(workspace, _surface(workspace)), {"srv__look": look})
    assert adapter.unmet() == ["srv__look needs service(s) the host did not set: cache, lookup"]
    with pytest.raises(MissingServiceError, match=r"srv__look needs .*cache, lookup"):
        adapter.require_services()
    adapter.ctx.services.put(LOOKUP, "x")
    adapter.ctx.services.put(CACHE, "y")
    assert adapter.unmet() == []
    adapter.require_services()  # optional ones may stay unset
