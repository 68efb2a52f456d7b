"""MCP servers that fail: unreachable, dying mid-session, coming back; idle timeouts extended by
progress — against the real server-everything (stdio and streamable HTTP)."""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.mcpservers import (
    HttpServer,
    everything_http,  # noqa: F401 - a fixture
    everything_stdio,
    free_port,
)
from yagent.kernel.judge import toolfail
from yagent.tools.adapter import ToolContext
from yagent.tools.guard import WorkspaceGuard
from yagent.tools.invocation import PUBLISH, Invocation, Needs
from yagent.tools.mcp import link
from yagent.tools.mcp.client import McpTools
from yagent.tools.mcp.config import ServerConfig
from yagent.tools.mcp.content import VISION_KEY
from yagent.tools.mcp.sampling import SAMPLER_KEY
from yagent.tools.surface import Surface
from yagent.toolspec.builtin import BUILTIN
from yagent.toolspec.profiles import profile


@pytest.fixture(autouse=True)
def quick_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(link, "BACKOFF", (0.05, 0.1))


async def call(mcp: McpTools, name: str, args: dict[str, Any], ctx: Any = None) -> Any:
    return await mcp.executors[name](ctx, args)


@pytest.mark.anyio
async def test_http_server_dying_and_returning(everything_http: HttpServer) -> None:  # noqa: F811
    cfg = ServerConfig.from_mapping("web", {"url": everything_http.url, "startup_timeout": 5})
    async with McpTools((cfg,)) as mcp:
        assert "hi" in (await call(mcp, "web__echo", {"message": "hi"}))["content"]
        everything_http.stop()
        with pytest.raises(toolfail.ToolFailure) as lost:
            await call(mcp, "web__echo", {"message": "again"})
        assert lost.value.kind in (toolfail.Kind.TRANSIENT, toolfail.Kind.OVERLOADED)
        assert "web" in str(lost.value)
        with pytest.raises(toolfail.ToolFailure) as down:
            await call(mcp, "web__echo", {"message": "still down"})
        assert down.value.kind is toolfail.Kind.OVERLOADED, "not sent: settles as not applied"
        assert "unavailable" in str(down.value)
        assert [name for name, _ in mcp.problems] == ["web"], mcp.problems
        everything_http.start()
        with anyio.fail_after(60):  # a bound, not a timed assertion: it reconnects on demand
            while True:
                try:
                    out = await call(mcp, "web__echo", {"message": "back"})
                    break
                except toolfail.ToolFailure:
                    await anyio.sleep(0.2)
        assert "back" in out["content"]
    # leaving did not raise, though the first connection died under it


@pytest.mark.anyio
async def test_unreachable_at_start_is_a_problem_and_the_rest_works() -> None:
    gone = ServerConfig.from_mapping(
        "gone", {"url": f"http://127.0.0.1:{free_port()}/mcp", "startup_timeout": 5}
    )
    dead = ServerConfig.from_mapping(
        "dead", {"command": "sh", "args": ["-c", "echo bad config >&2; exit 3"]}
    )
    async with McpTools((gone, dead, ServerConfig.from_mapping("ev", everything_stdio()))) as mcp:
        problems = dict(mcp.problems)
        assert "ConnectError" in problems["gone"] or "connect" in problems["gone"].lower()
        assert "bad config" in problems["dead"], "the stderr tail is shown"
        assert "hi" in (await call(mcp, "ev__echo", {"message": "hi"}))["content"]
        status = {s.name: s for s in mcp.status()}
        assert status["ev"].connected
        assert status["ev"].protocol == "2025-11-25"
        assert not status["gone"].connected
        assert status["gone"].error


@pytest.mark.anyio
async def test_stdio_server_killed_mid_session_reconnects(tmp_path: Path) -> None:
    cfg = ServerConfig.from_mapping("ev", everything_stdio())
    async with McpTools((cfg,)) as mcp:
        env = await call(mcp, "ev__get-env", {})
        assert "content" in env
        mine = [pid for pid in _children() if "server-everything" in _cmdline(pid)]
        assert mine, "the stdio server runs as a child process of this one"
        for pid in mine:
            os.kill(pid, signal.SIGKILL)
        kinds = set()
        with anyio.fail_after(60):
            while True:
                try:
                    out = await call(mcp, "ev__echo", {"message": "again"})
                    break
                except toolfail.ToolFailure as exc:
                    kinds.add(exc.kind)
                    await anyio.sleep(0.2)
        assert kinds <= {toolfail.Kind.TRANSIENT, toolfail.Kind.OVERLOADED}
        assert "again" in out["content"]
        assert [name for name, _ in mcp.problems] == ["ev"]


def _children() -> list[int]:
    """This test process's own child processes (never anyone else's)."""
    out = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                stat = (proc / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == os.getpid():
                out.append(int(proc.name))
    return out


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


@pytest.mark.anyio
async def test_progress_extends_the_idle_bound_and_is_published(workspace: Path) -> None:
    cfg = ServerConfig.from_mapping("ev", {**everything_stdio(), "tool_timeout": 1.5})
    seen: list[tuple[str, dict[str, Any]]] = []
    async with McpTools((cfg,)) as mcp:
        surface = Surface(BUILTIN, profile("coding"), WorkspaceGuard(workspace), external=mcp.specs)
        ctx = ToolContext(workspace, surface)
        ctx.services.put(PUBLISH, lambda kind, payload: seen.append((kind, dict(payload))))
        needs = Needs(optional=frozenset({PUBLISH, VISION_KEY, SAMPLER_KEY}))  # an MCP tool's
        ctx = ctx.for_call(Invocation(call_id="p1"), needs)
        # 3 s in all, a progress notification every 0.5 s: longer than tool_timeout, never idle
        out = await call(
            mcp, "ev__trigger-long-running-operation", {"duration": 3, "steps": 6}, ctx
        )
        assert "completed" in out["content"].lower()
        progress = [p for kind, p in seen if kind == "tool_progress"]
        assert len(progress) == 6
        assert progress[-1]["progress"] == 6
        assert progress[-1]["call_id"] == "p1"
        # one step of 3 s: silent for longer than tool_timeout ⇒ stopped, outcome unknown
        with pytest.raises(toolfail.ToolFailure) as idle:
            await call(mcp, "ev__trigger-long-running-operation", {"duration": 3, "steps": 1}, ctx)
        assert idle.value.kind is toolfail.Kind.TIMEOUT
        assert "tool_timeout" in str(idle.value)
        assert "hi" in (await call(mcp, "ev__echo", {"message": "hi"}))["content"]
