"""External tools from MCP servers (the official `mcp` SDK), stdio and streamable HTTP.

Contract:
- Each configured server's tools become external `Spec`s named `<server>__<tool>` (characters
  outside `[A-Za-z0-9_-]` become `_`), with the server's JSON Schema verbatim. The Surface makes
  them Cold, filters them by the profile's grants and judges them with the same chain as every
  other tool — this module never decides permissions.
- Effect: `read_only_hint` ⇒ READ (parallel-safe); anything else ⇒ NETWORK (not read-only).
  The hints travel as tags (`mcp`, the server name, `destructive`, `idempotent`, `read-only`).
- A server that fails to start or list its tools does not stop the others: it is reported in
  `problems` with the reason (and its stderr tail), never silently missing.
- A tool result with `is_error` raises `ToolFailure` carrying the server's text; non-text content
  is described, not dropped (`[image image/png, 1234 bytes]`).
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Mapping
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from yagent.kernel import toolfail
from yagent.tools.adapter import Executor, ToolContext
from yagent.toolspec import Effect, Spec, Tier

CALL_TIMEOUT = 120.0
_KEYS = {"command", "args", "env", "cwd", "url"}
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


class McpConfigError(ValueError):
    pass


@dataclass(frozen=True, slots=True)
class ServerConfig:
    name: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] | None = None
    cwd: str | None = None
    url: str | None = None

    @classmethod
    def from_mapping(cls, name: str, data: Mapping[str, Any]) -> ServerConfig:
        unknown = sorted(set(data) - _KEYS)
        if unknown:
            raise McpConfigError(f"mcp server {name!r}: unknown keys {unknown}")
        command, url = data.get("command"), data.get("url")
        if (command is None) == (url is None):
            raise McpConfigError(f"mcp server {name!r}: give exactly one of 'command' or 'url'")
        args = data.get("args", [])
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            raise McpConfigError(f"mcp server {name!r}: 'args' must be a list of strings")
        env = data.get("env")
        if env is not None and not (
            isinstance(env, dict) and all(isinstance(v, str) for v in env.values())
        ):
            raise McpConfigError(f"mcp server {name!r}: 'env' must map names to strings")
        return cls(name, command, tuple(args), env, data.get("cwd"), url)


def spec_name(server: str, tool: str) -> str:
    return f"{_UNSAFE.sub('_', server)}__{_UNSAFE.sub('_', tool)}"


def to_spec(server: str, tool: Any) -> Spec:
    hints = tool.annotations
    read_only = bool(hints and hints.read_only_hint)
    tags = {"mcp", server}
    if read_only:
        tags.add("read-only")
    if hints and hints.destructive_hint:
        tags.add("destructive")
    if hints and hints.idempotent_hint:
        tags.add("idempotent")
    schema = dict(tool.input_schema or {"type": "object"})
    schema.pop("title", None)
    return Spec(
        spec_name(server, tool.name),
        tool.description or f"{tool.name} (from MCP server {server})",
        schema,
        Effect.READ if read_only else Effect.NETWORK,
        Tier.COLD,
        brief=(hints.title if hints and hints.title else "") or (tool.title or ""),
        tags=frozenset(tags),
        external=True,
        own_timeout=lambda _args: CALL_TIMEOUT,  # its read timeout (the module seam)
    )


def render_content(items: Any) -> str:
    parts: list[str] = []
    for item in items or ():
        kind = getattr(item, "type", "")
        if kind == "text":
            parts.append(item.text)
        elif kind in ("image", "audio"):
            size = len(getattr(item, "data", "") or "")
            parts.append(f"[{kind} {getattr(item, 'mime_type', '?')}, {size} bytes base64]")
        else:
            parts.append(f"[{kind or 'unknown'} content]")
    return "\n".join(parts)


@dataclass
class McpTools:
    """Connects to servers inside `async with`; offers specs and executors while open."""

    servers: tuple[ServerConfig, ...]
    specs: list[Spec] = field(default_factory=list)
    executors: dict[str, Executor] = field(default_factory=dict)
    problems: list[tuple[str, str]] = field(default_factory=list)
    _stack: AsyncExitStack = field(default_factory=AsyncExitStack)

    async def __aenter__(self) -> McpTools:
        await self._stack.__aenter__()
        for server in self.servers:
            errlog = tempfile.TemporaryFile("w+", encoding="utf-8")  # noqa: SIM115 - closed below
            self._stack.callback(errlog.close)
            try:
                session = await self._connect(server, errlog)
                listed = await session.list_tools()
            except Exception as exc:
                errlog.seek(0)
                tail = errlog.read()[-500:].strip()
                reason = f"{type(exc).__name__}: {exc}" + (f" | stderr: {tail}" if tail else "")
                self.problems.append((server.name, reason))
                continue
            for tool in listed.tools:
                spec = to_spec(server.name, tool)
                self.specs.append(spec)
                self.executors[spec.name] = _executor(session, tool.name)
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._stack.__aexit__(None, None, None)

    async def _connect(self, server: ServerConfig, errlog: Any) -> ClientSession:
        if server.url is not None:
            streams = await self._stack.enter_async_context(streamable_http_client(server.url))
            read, write = streams[0], streams[1]
        else:
            assert server.command is not None
            params = StdioServerParameters(
                command=server.command,
                args=list(server.args),
                env=dict(server.env) if server.env is not None else None,
                cwd=Path(server.cwd) if server.cwd else None,
            )
            read, write = await self._stack.enter_async_context(stdio_client(params, errlog))
        session = await self._stack.enter_async_context(ClientSession(read, write))
        await session.initialize()
        return session


def _executor(session: ClientSession, tool: str) -> Executor:
    async def execute(ctx: ToolContext, args: Any) -> dict[str, Any]:
        result: Any = await session.call_tool(tool, dict(args), read_timeout_seconds=CALL_TIMEOUT)
        text = render_content(getattr(result, "content", ()))
        if getattr(result, "is_error", False):
            raise toolfail.ToolFailure(toolfail.Kind.UNKNOWN, text or f"{tool} reported an error")
        out: dict[str, Any] = {"content": text}
        structured = getattr(result, "structured_content", None)
        if structured is not None:
            out["structured"] = structured
        return out

    return execute
