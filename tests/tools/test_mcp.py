"""External MCP tools against a real MCP server process (stdio and streamable HTTP)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from yagent.tools.adapter import Adapter, ToolContext
from yagent.tools.guard import WorkspaceGuard
from yagent.tools.mcp import McpConfigError, McpTools, ServerConfig, render_content, spec_name
from yagent.tools.surface import Surface
from yagent.toolspec import BUILTIN, Effect, Tier, profile

SERVER = str(Path(__file__).with_name("mcp_server.py"))


def stdio_server(name: str = "demo") -> ServerConfig:
    return ServerConfig.from_mapping(name, {"command": sys.executable, "args": [SERVER]})


@pytest.mark.anyio
async def test_stdio_server_tools_become_cold_external_specs(workspace: Path) -> None:
    async with McpTools((stdio_server(),)) as mcp:
        names = {s.name for s in mcp.specs}
        assert names == {"demo__add", "demo__create_ticket", "demo__read_file", "demo__fail"}
        add = next(s for s in mcp.specs if s.name == "demo__add")
        assert add.effect is Effect.READ
        assert add.brief == "Add numbers"
        assert "read-only" in add.tags
        ticket = next(s for s in mcp.specs if s.name == "demo__create_ticket")
        assert ticket.effect is Effect.NETWORK
        assert "destructive" in ticket.tags
        surface = Surface(BUILTIN, profile("coding"), WorkspaceGuard(workspace), external=mcp.specs)
        assert all(surface.spec(n).tier is Tier.COLD for n in names)  # type: ignore[union-attr]
        assert surface.is_parallelizable("demo__add")
        assert not surface.is_parallelizable("demo__create_ticket")
        adapter = Adapter(ToolContext(workspace, surface), mcp.executors)
        first = await adapter.call("demo__add", '{"a": 2}', "c1")
        assert json.loads(first.content)["kind"] == "not_loaded"  # same gate as every tool
        res = await adapter.call("demo__add", '{"a": 2, "b": 5}', "c2")
        assert res.ok
        assert json.loads(res.content) == {"content": "7", "structured": {"result": 7}}
        surface.disclosure.load(["demo__fail"])
        res = await adapter.call("demo__fail", '{"msg": "boom"}', "c3")
        assert not res.ok
        assert "Error executing tool fail" in json.loads(res.content)["error"]


@pytest.mark.anyio
async def test_profile_without_external_grants_sees_nothing(workspace: Path) -> None:
    async with McpTools((stdio_server(),)) as mcp:
        surface = Surface(BUILTIN, profile("chat"), WorkspaceGuard(workspace), external=mcp.specs)
        assert surface.spec("demo__add") is None
        assert len(surface.skipped()) == 4


@pytest.mark.anyio
async def test_broken_server_is_reported_and_others_work() -> None:
    broken = ServerConfig.from_mapping(
        "broken",
        {
            "command": sys.executable,
            "args": ["-c", "import sys; sys.stderr.write('bad config'); sys.exit(3)"],
        },
    )
    async with McpTools((broken, stdio_server())) as mcp:
        assert [name for name, _ in mcp.problems] == ["broken"]
        assert {s.name for s in mcp.specs} >= {"demo__add"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def http_server() -> Iterator[str]:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, SERVER, "http", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            time.sleep(0.1)
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.mark.anyio
async def test_streamable_http_server(http_server: str, workspace: Path) -> None:
    async with McpTools((ServerConfig.from_mapping("web", {"url": http_server}),)) as mcp:
        assert mcp.problems == []
        execute = mcp.executors["web__add"]
        assert (await execute(None, {"a": 40, "b": 2}))["content"] == "42"  # type: ignore[arg-type]


def test_config_validation() -> None:
    with pytest.raises(McpConfigError, match="exactly one"):
        ServerConfig.from_mapping("x", {})
    with pytest.raises(McpConfigError, match="unknown keys"):
        ServerConfig.from_mapping("x", {"command": "c", "bogus": 1})
    with pytest.raises(McpConfigError, match="args"):
        ServerConfig.from_mapping("x", {"command": "c", "args": "no"})
    with pytest.raises(McpConfigError, match="env"):
        ServerConfig.from_mapping("x", {"command": "c", "env": {"A": 1}})
    assert spec_name("my server", "do.it") == "my_server__do_it"


def test_render_content_describes_non_text() -> None:
    class Item:
        def __init__(self, **kw: object) -> None:
            self.__dict__.update(kw)

    items = [
        Item(type="text", text="hi"),
        Item(type="image", data="abcd", mime_type="image/png"),
        Item(type="resource"),
    ]
    assert render_content(items) == "hi\n[image image/png, 4 bytes base64]\n[resource content]"
