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
- A server's tools are offered again each time they are listed — on every (re)connection and
  after `notifications/tools/list_changed` — replacing what that server offered before; when
  the offer changed, every `watching` callback is called (the host rebuilds its Surfaces). A
  server that was down at start gets its tools when it comes back.
- A server's resources and prompts are offered as read-only tools (`tools.mcp.resources`).
- What a server asks of yagent while connected — roots, elicitation, sampling — is answered by
  `inbound` (`tools.mcp.inbound`), with the context of that server's call in flight.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession
from mcp.shared.exceptions import MCPError

from yagent.kernel.judge import toolfail
from yagent.tools.adapter import Executor, ToolContext
from yagent.tools.invocation import PUBLISH, needs
from yagent.tools.mcp import resources, specs
from yagent.tools.mcp.config import ServerConfig
from yagent.tools.mcp.content import VISION_KEY, render_content
from yagent.tools.mcp.inbound import Inbound
from yagent.tools.mcp.link import Link, ServerUnavailable, describe
from yagent.tools.mcp.sampling import SAMPLER_KEY
from yagent.tools.mcp.status import ServerStatus
from yagent.tools.toolresult import WithImages
from yagent.toolspec import Spec

PROGRESS_FACTOR = 10
_NOT_RUN = {-32602: toolfail.Kind.INVALID_ARGS, -32601: toolfail.Kind.NOT_FOUND}
# How SDKs put a protocol error they raised before the tool ran into an `isError` result
# (2025-11-25: input validation errors are tool execution errors): "MCP error -32602: …".
_PROTOCOL_REFUSAL = re.compile(r"\AMCP error (-326\d\d):")
SessionFactory = Callable[[ServerConfig, Any, Any], ClientSession]


@dataclass
class McpTools:
    """Connects to servers inside `async with`; offers specs and executors while open."""

    servers: tuple[ServerConfig, ...]
    inbound: Inbound = field(default_factory=Inbound)  # roots, elicitation, sampling
    factory: SessionFactory | None = None  # default: `inbound.session`
    auth_dir: Path | None = None  # OAuth tokens of `oauth = true` servers (`tools.mcp.oauth`)
    specs: list[Spec] = field(default_factory=list)
    executors: dict[str, Executor] = field(default_factory=dict)
    problems: list[tuple[str, str]] = field(default_factory=list)  # (server, why unavailable)
    notes: list[tuple[str, str]] = field(default_factory=list)  # (server, a tool not offered)
    links: dict[str, Link] = field(default_factory=dict)
    watchers: list[Callable[[], None]] = field(default_factory=list)
    _owned: dict[str, list[str]] = field(default_factory=dict)  # server → its spec names
    _group: Any = None

    def report(self, server: str, reason: str) -> None:
        self.problems.append((server, reason))

    async def __aenter__(self) -> McpTools:
        self._group = anyio.create_task_group()
        await self._group.__aenter__()
        self.inbound.list_changed = self._list_changed
        for server in self.servers:
            link = Link(server, self.report, self._bind(server), self._listed, self.auth_dir)
            self.links[server.name] = link
            self._group.start_soon(link.run)
        for link in self.links.values():
            await link.listed.wait()
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._group.cancel_scope.cancel()
        await self._group.__aexit__(None, None, None)

    def _bind(self, server: ServerConfig) -> Callable[[Any, Any], ClientSession]:
        factory = self.factory or self.inbound.session
        return lambda read, write: factory(server, read, write)

    @contextlib.contextmanager
    def watching(self, changed: Callable[[], None]) -> Iterator[None]:
        """`changed()` is called whenever a server's offered tools change while this is open."""
        self.watchers.append(changed)
        try:
            yield
        finally:
            self.watchers.remove(changed)

    def _list_changed(self, server: str) -> None:
        link = self.links.get(server)
        if link is not None:
            link.relist()

    def _listed(self, link: Link) -> None:
        before = [_shape(s) for s in self.specs]
        self._offer(link)
        if [_shape(s) for s in self.specs] != before:
            for changed in list(self.watchers):
                changed()

    def _offer(self, link: Link) -> None:
        """(Re)offer one server's tools: what it offered before is replaced."""
        name = link.config.name
        old = set(self._owned.pop(name, ()))
        self.specs[:] = [s for s in self.specs if s.name not in old]
        for gone in old:
            self.executors.pop(gone, None)
        self.notes[:] = [(server, note) for server, note in self.notes if server != name]
        before = set(self.executors)
        for tool in link.tools:
            why = specs.unsupported(tool)
            if why:
                self.notes.append(
                    (name, f"tool {specs.clean_text(tool.name, 64)} not offered: {why}")
                )
                continue
            spec = specs.to_spec(name, tool, link.config.tool_timeout * PROGRESS_FACTOR)
            self.specs.append(spec)
            self.executors[spec.name] = _executor(link, self.inbound, tool.name, spec.name)
        for spec, execute in resources.offered(link):
            if spec.name in self.executors:
                self.notes.append((name, f"{spec.name} not offered: a server tool has that name"))
                continue
            self.specs.append(spec)
            self.executors[spec.name] = execute
        self._owned[name] = sorted(set(self.executors) - before)

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


def _shape(spec: Spec) -> tuple[Any, ...]:
    return (spec.name, spec.description, spec.brief, spec.effect, spec.tags, str(spec.parameters))


def _failure(kind: toolfail.Kind, text: str) -> toolfail.ToolFailure:
    return toolfail.ToolFailure(kind, text)


def _executor(link: Link, inbound: Inbound, tool: str, spec_name: str) -> Executor:
    @needs(PUBLISH, VISION_KEY, SAMPLER_KEY)  # SAMPLER_KEY: read by `inbound` during the call
    async def execute(ctx: ToolContext, args: Any) -> dict[str, Any] | WithImages:
        server = link.config.name
        try:
            session = await link.session()
        except ServerUnavailable as exc:
            raise _failure(toolfail.Kind.OVERLOADED, str(exc)) from None
        idle = link.config.tool_timeout
        publish = ctx.services.get(PUBLISH) if ctx is not None else None
        call_id = ctx.call.call_id if ctx is not None else ""
        scope = anyio.CancelScope(deadline=anyio.current_time() + idle)
        cap = anyio.current_time() + idle * PROGRESS_FACTOR

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            scope.deadline = min(cap, anyio.current_time() + idle)
            if publish is not None:
                publish(
                    "tool_progress",
                    {"call_id": call_id, "name": spec_name, "progress": progress, "total": total}
                    | ({"message": specs.clean_text(message, 200)} if message else {}),
                )

        result: Any = None
        try:
            with scope, inbound.during(server, ctx):
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
        await link.settled()  # a call that changed the server's tools returns once they are known
        if scope.cancelled_caught or result is None:
            raise _failure(
                toolfail.Kind.TIMEOUT,
                f"MCP server {server}: {tool} sent nothing for {idle:g} s (tool_timeout) and was "
                "stopped; whether it took effect is unknown",
            )
        vision = ctx is not None and ctx.services.get(VISION_KEY) is True
        images: list[tuple[str, str]] | None = [] if vision else None
        text = render_content(getattr(result, "content", ()), images)
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
        return WithImages(out, tuple(images)) if images else out

    return execute
