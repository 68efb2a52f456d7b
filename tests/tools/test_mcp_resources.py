"""Resources and prompts of the real reference server (server-everything) as read-only tools, and
the functions the host reuses for `@server:uri` references and prompt expansion."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.mcpservers import everything_stdio, filesystem, memory
from yagent.kernel.judge import toolfail
from yagent.tools import effects
from yagent.tools.audit import operation
from yagent.tools.mcp.client import McpTools
from yagent.tools.mcp.config import ServerConfig
from yagent.tools.mcp.resources import get_prompt, run_bounded
from yagent.toolspec import Effect
from yagent.toolspec.profiles import profile

NAMES = ("mcp_list_resources", "mcp_read_resource", "mcp_list_prompts", "mcp_get_prompt")


def ev() -> ServerConfig:
    return ServerConfig.from_mapping("ev", everything_stdio())


@pytest.mark.anyio
async def test_resource_and_prompt_tools_are_read_only_and_work(workspace: Path) -> None:
    async with McpTools((ev(),)) as mcp:
        specs = {s.name: s for s in mcp.specs}
        for name in NAMES:
            spec = specs[f"ev__{name}"]
            assert spec.effect is Effect.READ
            assert not spec.always_authorize
            assert profile("repo").grants(spec)  # the read-only agent may read resources
            assert operation(spec).risk == 0
            assert effects.EffectTable.build().classify(spec, {}) is None
        run = mcp.executors
        listed = (await run["ev__mcp_list_resources"](None, {}))["content"]  # type: ignore[arg-type]
        assert "demo://resource/" in listed
        assert "template demo://resource/dynamic/text/{resourceId}" in listed
        text = await run["ev__mcp_read_resource"](None, {"uri": "demo://resource/dynamic/text/1"})  # type: ignore[arg-type]
        assert "[resource demo://resource/dynamic/text/1 (text/plain)]" in text["content"]
        blob = await run["ev__mcp_read_resource"](None, {"uri": "demo://resource/dynamic/blob/1"})  # type: ignore[arg-type]
        assert "binary" in blob["content"]
        assert "bytes, not shown" in blob["content"]
        prompts = (await run["ev__mcp_list_prompts"](None, {}))["content"]  # type: ignore[arg-type]
        assert "args-prompt(city, state?)" in prompts
        got = await run["ev__mcp_get_prompt"](
            None, {"name": "args-prompt", "arguments": {"city": "Oslo"}}
        )  # type: ignore[arg-type]
        assert got["content"] == "user: What's weather in Oslo?"
        with pytest.raises(toolfail.ToolFailure) as caught:
            await run["ev__mcp_read_resource"](None, {"uri": "demo://resource/nothing/here"})  # type: ignore[arg-type]
        assert caught.value.kind is toolfail.Kind.NOT_FOUND
        # the same function a slash command will use
        link = mcp.links["ev"]
        filled = await run_bounded(link, lambda s: get_prompt(s, "args-prompt", {"city": "Rome"}))
        assert "Rome" in filled


@pytest.mark.anyio
async def test_only_the_declared_capabilities_get_tools(tmp_path: Path) -> None:
    servers = (
        ServerConfig.from_mapping("fs", filesystem(tmp_path)),  # declares tools only
        ServerConfig.from_mapping("mem", memory(tmp_path / "m.jsonl")),  # tools and resources
    )
    async with McpTools(servers) as mcp:
        names = {s.name for s in mcp.specs}
    assert "fs__read_text_file" in names
    assert not {f"fs__{n}" for n in NAMES} & names
    assert {"mem__mcp_list_resources", "mem__mcp_read_resource"} <= names
    assert not {"mem__mcp_list_prompts", "mem__mcp_get_prompt"} & names
