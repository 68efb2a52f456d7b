"""External tools from MCP servers (the official `mcp` SDK), stdio and streamable HTTP.

Contract:
- Each configured server's tools become external `Spec`s named `<server>__<tool>`
  (`tools.mcp.specs`: effect from the annotations, text made safe). The Surface makes them Cold,
  filters them by the profile's grants and judges them with the same chain as every other tool —
  this module never decides permissions.
- Each server lives in its own `Link` task (`tools.mcp.link`): a server that fails to start, dies
  or drops its HTTP endpoint is reported once in `problems` ("server X unavailable: …", with its
  stderr tail) and never ends the run; its tools answer with that error and yagent reconnects
  with backoff. Leaving `async with` closes every server; nothing a server did escapes it.
  A tool that cannot be offered is named in `notes` with the reason.
- A tool call is bounded by the server's `tool_timeout` as an *idle* bound: it sends a
  `progressToken`, and each progress notification starts the bound again (and is published as a
  `tool_progress` event when the host put a publisher in the context), up to `PROGRESS_FACTOR`
  times `tool_timeout` in all (the bound the tool declares as its own, `Spec.own_timeout`).
- Failures carry kinds a side-effect runner can settle: the server was not connected (not sent:
  OVERLOADED), JSON-RPC -32602 invalid params (INVALID_ARGS) and -32601 unknown method
  (NOT_FOUND) — raised, or returned as an `isError` result reading "MCP error -32602: …", the
  form the SDKs give input-validation errors — prove nothing ran: *not applied*; the idle
  timeout (TIMEOUT) and a connection lost during the call (TRANSIENT) leave the outcome
  unknown; a result with `isError` is the tool's own failure (UNKNOWN: it ran), and so is a
  result that does not match its declared output schema.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
from mcp import ClientSession
from mcp.shared.exceptions import MCPError

from yagent.kernel import toolfail
from yagent.tools.adapter import Executor, ToolContext
from yagent.tools.mcp import specs
from yagent.tools.mcp.config import ServerConfig
from yagent.tools.mcp.connect import ServerStatus
from yagent.tools.mcp.content import render_content
from yagent.tools.mcp.link import Link, ServerUnavailable, describe
from yagent.toolspec import Spec

PROGRESS_FACTOR = 10
PUBLISH_KEY = "publish"  # the host's event publisher in ToolContext.extras (as run_bash uses)
_NOT_RUN = {-32602: toolfail.Kind.INVALID_ARGS, -32601: toolfail.Kind.NOT_FOUND}
# How SDKs put a protocol error they raised before the tool ran into an `isError` result
# (2025-11-25: input validation errors are tool execution errors): "MCP error -32602: …".
_PROTOCOL_REFUSAL = re.compile(r"\AMCP error (-326\d\d):")
SessionFactory = Callable[[ServerConfig, Any, Any], ClientSession]


def plain_session(config: ServerConfig, read: Any, write: Any) -> ClientSession:
    return ClientSession(read, write)


@dataclass
class McpTools:
    """Connects to servers inside `async with`; offers specs and executors while open."""

    servers: tuple[ServerConfig, ...]
    factory: SessionFactory = plain_session
    specs: list[Spec] = field(default_factory=list)
    executors: dict[str, Executor] = field(default_factory=dict)
    problems: list[tuple[str, str]] = field(default_factory=list)  # (server, why unavailable)
    notes: list[tuple[str, str]] = field(default_factory=list)  # (server, a tool not offered)
    links: dict[str, Link] = field(default_factory=dict)
    _group: Any = None

    def report(self, server: str, reason: str) -> None:
        self.problems.append((server, reason))

    async def __aenter__(self) -> McpTools:
        self._group = anyio.create_task_group()
        await self._group.__aenter__()
        for server in self.servers:
            link = Link(server, self.report, self._bind(server))
            self.links[server.name] = link
            self._group.start_soon(link.run)
        for link in self.links.values():
            await link.listed.wait()
            self._offer(link)
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._group.cancel_scope.cancel()
        await self._group.__aexit__(None, None, None)

    def _bind(self, server: ServerConfig) -> Callable[[Any, Any], ClientSession]:
        return lambda read, write: self.factory(server, read, write)

    def _offer(self, link: Link) -> None:
        name = link.config.name
        for tool in link.tools:
            why = specs.unsupported(tool)
            if why:
                self.notes.append(
                    (name, f"tool {specs.clean_text(tool.name, 64)} not offered: {why}")
                )
                continue
            spec = specs.to_spec(name, tool, link.config.tool_timeout * PROGRESS_FACTOR)
            self.specs.append(spec)
            self.executors[spec.name] = _executor(link, tool.name, spec.name)

    def status(self) -> list[ServerStatus]:
        return [
            ServerStatus(
                name,
                link.config.shown(),
                link.up,
                len(link.tools) if link.up else 0,
                link.protocol if link.up else "",
                link.error,
            )
            for name, link in self.links.items()
        ]


def _failure(kind: toolfail.Kind, text: str) -> toolfail.ToolFailure:
    return toolfail.ToolFailure(kind, text)


def _executor(link: Link, tool: str, spec_name: str) -> Executor:
    async def execute(ctx: ToolContext, args: Any) -> dict[str, Any]:
        server = link.config.name
        try:
            session = await link.session()
        except ServerUnavailable as exc:
            raise _failure(toolfail.Kind.OVERLOADED, str(exc)) from None
        idle = link.config.tool_timeout
        publish = ctx.extras.get(PUBLISH_KEY) if ctx is not None else None
        call_id = ctx.extras.get("call_id", "") if ctx is not None else ""
        scope = anyio.CancelScope(deadline=anyio.current_time() + idle)
        cap = anyio.current_time() + idle * PROGRESS_FACTOR

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            scope.deadline = min(cap, anyio.current_time() + idle)
            if callable(publish):
                publish(
                    "tool_progress",
                    {"call_id": call_id, "name": spec_name, "progress": progress, "total": total}
                    | ({"message": specs.clean_text(message, 200)} if message else {}),
                )

        result: Any = None
        try:
            with scope:
                result = await session.call_tool(tool, dict(args), progress_callback=on_progress)
        except MCPError as exc:
            code = exc.error.code
            if code in _NOT_RUN:
                raise _failure(
                    _NOT_RUN[code],
                    f"{server} refused the call before running it: {exc.error.message}",
                ) from None
            if code == -32000:  # connection closed
                link.lost(f"the connection was lost during a call ({exc.error.message})")
                raise _failure(
                    toolfail.Kind.TRANSIENT,
                    f"MCP server {server}: the connection was lost during the call; whether "
                    "it ran is unknown",
                ) from None
            raise _failure(
                toolfail.Kind.UNKNOWN,
                f"{server} answered JSON-RPC error {code}: {exc.error.message}",
            ) from None
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError) as exc:
            link.lost(f"the connection broke during a call: {describe(exc)}")
            raise _failure(
                toolfail.Kind.TRANSIENT,
                f"MCP server {server}: the connection broke during the call ({describe(exc)}); "
                "whether it ran is unknown",
            ) from None
        except RuntimeError as exc:  # the SDK's output-schema check: it ran, its result is off
            raise _failure(toolfail.Kind.UNKNOWN, f"{server}: {describe(exc)}") from None
        if scope.cancelled_caught or result is None:
            raise _failure(
                toolfail.Kind.TIMEOUT,
                f"MCP server {server}: {tool} sent nothing for {idle:g} s (tool_timeout) and was "
                "stopped; whether it took effect is unknown",
            )
        text = render_content(getattr(result, "content", ()))
        if getattr(result, "is_error", False):
            refused = _PROTOCOL_REFUSAL.match(text)
            if refused and int(refused.group(1)) in _NOT_RUN:
                kind = _NOT_RUN[int(refused.group(1))]
                raise _failure(kind, f"{server} refused the call before running it: {text}")
            raise _failure(toolfail.Kind.UNKNOWN, text or f"{tool} reported an error")
        out: dict[str, Any] = {"content": text}
        structured = getattr(result, "structured_content", None)
        if structured is not None:
            out["structured"] = structured
        return out

    return execute
