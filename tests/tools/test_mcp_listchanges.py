"""Tool lists that change: `notifications/tools/list_changed` (tests/mcp_growing.py, the SDK's own
server) and a server-everything over HTTP that was down at start and comes back."""

from __future__ import annotations

import sys

import anyio
import pytest

from tests.mcpservers import ROOT, HttpServer, free_port
from yagent.tools.mcp import link
from yagent.tools.mcp.client import McpTools
from yagent.tools.mcp.config import ServerConfig


def growing() -> ServerConfig:
    table = {"command": sys.executable, "args": ["-m", "tests.mcp_growing"], "cwd": str(ROOT)}
    return ServerConfig.from_mapping("g", table)


@pytest.mark.anyio
async def test_list_changed_offers_the_new_tool_before_the_call_returns() -> None:
    changes: list[int] = []
    async with McpTools((growing(),)) as mcp:
        assert "g__wave" not in mcp.executors
        with mcp.watching(lambda: changes.append(len(mcp.specs))):
            out = await mcp.executors["g__grow"](None, {"name": "wave"})  # type: ignore[arg-type]
            assert out["content"] == "added wave"
            # settled: the call returned after the new list was offered
            assert changes
            assert "g__wave" in {s.name for s in mcp.specs}
            said = await mcp.executors["g__wave"](None, {})  # type: ignore[arg-type]
        assert said["content"] == "wave says hello"
        # a re-listing that changes nothing calls no watcher
        before = len(changes)
        mcp.links["g"].relist()
        await mcp.links["g"].settled()
        assert len(changes) == before


@pytest.mark.anyio
async def test_a_server_down_at_start_gets_its_tools_when_it_comes_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(link, "BACKOFF", (0.2,))
    server = HttpServer(free_port())
    cfg = ServerConfig.from_mapping("web", {"url": server.url, "startup_timeout": 10})
    arrived = anyio.Event()
    try:
        async with McpTools((cfg,)) as mcp:
            assert mcp.specs == []
            assert [name for name, _ in mcp.problems] == ["web"]
            with mcp.watching(arrived.set):
                await anyio.to_thread.run_sync(server.start)
                with anyio.fail_after(60):  # a bound, not a speed claim
                    await arrived.wait()
                out = await mcp.executors["web__get-sum"](None, {"a": 1, "b": 2})  # type: ignore[arg-type]
            assert "3" in out["content"]
            assert mcp.status()[0].connected
    finally:
        server.stop()
