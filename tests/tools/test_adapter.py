"""Adapter.call: parse fallback, order, serialisation, classification."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.tools.conftest import make_surface
from yagent.kernel.judge.invoke import Call, FuncStage, Verdict
from yagent.tools import flow
from yagent.tools.adapter import Adapter, ToolContext, parse_arguments
from yagent.tools.guard import WorkspaceGuard
from yagent.tools.surface import Surface, SurfaceOptions
from yagent.toolspec import Effect, Spec, Tier, params
from yagent.toolspec.builtin import BUILTIN
from yagent.toolspec.profiles import profile


def test_parse_arguments_fallbacks() -> None:
    assert parse_arguments('{"a": 1}') == {"a": 1}
    assert parse_arguments("not json") == {"input": "not json"}
    assert parse_arguments("[1, 2]") == {"input": "[1, 2]"}
    deep = "[" * 100_000 + "]" * 100_000
    assert parse_arguments(deep) == {"input": deep}
    assert parse_arguments("") == {}
    assert parse_arguments(None) == {}
    assert parse_arguments({"b": 2}) == {"b": 2}


def adapter_with(workspace: Path, home: Path, executors: dict[str, Any], **opts: Any) -> Adapter:
    surface = make_surface(workspace, home, **opts)
    return Adapter(ToolContext(workspace, surface), executors)


@pytest.mark.anyio
async def test_non_json_reaches_the_executor_as_input(workspace: Path, home: Path) -> None:
    seen: list[Any] = []
    free = Spec("srv__free", "Free text tool.", {"type": "object"}, Effect.READ, Tier.HOT)
    surface = Surface(
        BUILTIN,
        profile("coding"),
        WorkspaceGuard(workspace),
        external=[free],
        options=SurfaceOptions(deferred=False),
    )

    async def execute(ctx: ToolContext, args: Any) -> dict[str, Any]:
        seen.append(args)
        return {"ok": True}

    adapter = Adapter(ToolContext(workspace, surface), {"srv__free": execute})
    res = await adapter.call("srv__free", "plain words", "c1")
    assert res.ok
    assert seen == [{"input": "plain words"}]


@pytest.mark.anyio
async def test_unserialisable_result_is_an_error(workspace: Path, home: Path) -> None:
    async def bad(ctx: ToolContext, args: Any) -> Any:
        return {"x": object()}

    res = await adapter_with(workspace, home, {"think": bad}).call("think", '{"thought": "t"}')
    assert not res.ok
    assert json.loads(res.content)["kind"] == "internal"
    assert "cannot be serialised" in json.loads(res.content)["error"]


@pytest.mark.anyio
async def test_pydantic_results_are_serialised(workspace: Path, home: Path) -> None:
    async def model(ctx: ToolContext, args: Any) -> Any:
        return params.ThinkArgs(thought="x")

    res = await adapter_with(workspace, home, {"think": model}).call("think", '{"thought": "t"}')
    assert res.ok
    assert json.loads(res.content) == {"thought": "x"}


@pytest.mark.anyio
async def test_invalid_arguments_are_classified(workspace: Path, home: Path) -> None:
    adapter = adapter_with(workspace, home, {"think": flow.think})
    res = await adapter.call("think", '{"thought": 3, "extra": 1}', "c1")
    body = json.loads(res.content)
    assert not res.ok
    assert body["kind"] == "invalid_args"
    assert "thought" in body["error"]
    assert "extra" in body["error"]


@pytest.mark.anyio
async def test_executor_exception_is_classified(workspace: Path, home: Path) -> None:
    async def boom(ctx: ToolContext, args: Any) -> Any:
        raise TimeoutError("slow")

    res = await adapter_with(workspace, home, {"think": boom}).call("think", '{"thought": "t"}')
    body = json.loads(res.content)
    assert body["kind"] == "timeout"
    assert body["retryable"] is True
    assert body["guidance"]


@pytest.mark.anyio
async def test_unknown_tool_is_forbidden_and_not_loaded_is_retryable(
    workspace: Path, home: Path
) -> None:
    ext = Spec("srv__cold", "Cold tool.", {"type": "object"}, Effect.READ, Tier.COLD)
    surface = Surface(BUILTIN, profile("coding"), WorkspaceGuard(workspace), external=[ext])
    calls: list[Any] = []

    async def execute(ctx: ToolContext, args: Any) -> dict[str, Any]:
        calls.append(args)
        return {}

    adapter = Adapter(ToolContext(workspace, surface), {"srv__cold": execute})
    res = await adapter.call("nope", "{}", "c1")
    assert json.loads(res.content)["kind"] == "forbidden"
    first = await adapter.call("srv__cold", "{}", "c2")
    assert json.loads(first.content)["kind"] == "not_loaded"
    assert json.loads(first.content)["retryable"] is True
    assert calls == []
    second = await adapter.call("srv__cold", "{}", "c3")
    assert second.ok
    assert calls == [{}]


@pytest.mark.anyio
async def test_missing_executor_is_an_error_not_a_crash(workspace: Path, home: Path) -> None:
    res = await adapter_with(workspace, home, {}).call("think", '{"thought": "t"}', "c1")
    assert not res.ok
    assert "no executor" in json.loads(res.content)["error"]


@pytest.mark.anyio
async def test_host_stage_denial_stops_before_the_guard(workspace: Path, home: Path) -> None:
    async def deny(call: Call) -> Verdict:
        return Verdict.deny("hook said no")

    adapter = adapter_with(
        workspace, home, {"think": flow.think}, host_stages=(FuncStage("hooks", deny),)
    )
    res = await adapter.call("think", '{"thought": "t"}', "c1")
    assert not res.ok
    assert json.loads(res.content)["stage"] == "hooks"
    assert res.judgement is not None
    assert [v.stage for v in res.judgement.trace] == ["hooks"]
