"""Flow executors: agent_exit echoes every schema key, load_tool."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.tools.conftest import make_surface
from yagent.tools import flow
from yagent.tools.adapter import Adapter, ToolContext
from yagent.tools.guard import WorkspaceGuard
from yagent.tools.surface import Surface
from yagent.toolspec import Effect, Spec, Tier, params
from yagent.toolspec.builtin import BUILTIN, builtin_by_name
from yagent.toolspec.profiles import profile


@pytest.mark.anyio
async def test_agent_exit_echoes_every_schema_key(workspace: Path, home: Path) -> None:
    schema_keys = set(builtin_by_name()["agent_exit"].parameters["properties"])
    ctx = ToolContext(workspace, make_surface(workspace, home))
    args = params.AgentExitArgs(reason="r", summary="s", handoff={"k": 1}, blueprint={"b": 2})
    echoed = await flow.agent_exit(ctx, args)
    assert echoed["finished"] is True
    assert set(echoed) - {"finished"} == schema_keys
    assert echoed["handoff"] == {"k": 1}
    assert echoed["blueprint"] == {"b": 2}


@pytest.mark.anyio
async def test_ask_user_without_a_person_says_so(workspace: Path, home: Path) -> None:
    ctx = ToolContext(workspace, make_surface(workspace, home))
    out = await flow.ask_user_for_help(ctx, params.AskUserArgs(question="q?"))
    assert out["answered"] is False
    assert "no person" in out["note"]


def cold(name: str, description: str) -> Spec:
    return Spec(name, description, {"type": "object"}, Effect.READ, Tier.COLD)


@pytest.mark.anyio
async def test_load_tool_by_query_and_name(workspace: Path) -> None:
    ext = [
        cold("gh__create_issue", "Create an issue in a GitHub repository."),
        cold("gh__merge_pr", "Merge a pull request."),
        cold("slack__post", "Post a message to a Slack channel."),
    ]
    surface = Surface(BUILTIN, profile("coding"), WorkspaceGuard(workspace), external=ext)
    adapter = Adapter(ToolContext(workspace, surface), {"load_tool": flow.load_tool})
    res = await adapter.call("load_tool", json.dumps({"query": "post slack message"}), "c1")
    body = json.loads(res.content)
    assert "slack__post" in body["loaded"]
    assert surface.disclosure.is_visible("slack__post")
    res = await adapter.call("load_tool", json.dumps({"names": ["gh__merge_pr", "zzz"]}), "c2")
    body = json.loads(res.content)
    assert body["loaded"] == ["gh__merge_pr"]
    assert body["unknown"] == ["zzz"]
    res = await adapter.call("load_tool", "{}", "c3")
    assert "give names or a query" in json.loads(res.content)["error"]
    res = await adapter.call("load_tool", json.dumps({"query": "kubernetes pods"}), "c4")
    assert "no catalog tool matches" in json.loads(res.content)["note"]


@pytest.mark.anyio
async def test_load_tool_trimming_is_visible(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from yagent.kernel.judge import tooldisclose

    monkeypatch.setattr(flow, "LOAD_BUDGET", tooldisclose.Budget(max_schemas=1))
    ext = [cold(f"srv__t{i}", f"Tool number {i}.") for i in range(3)]
    surface = Surface(BUILTIN, profile("coding"), WorkspaceGuard(workspace), external=ext)
    ctx = ToolContext(workspace, surface)
    out = await flow.load_tool(ctx, params.LoadToolArgs(names=["srv__t0", "srv__t1", "srv__t2"]))
    assert out["loaded"] == ["srv__t0"]
    assert out["trimmed"] == ["srv__t1", "srv__t2"]
    assert "budget" in out["note"]
