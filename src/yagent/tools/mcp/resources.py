"""A server's resources and prompts: as read-only tools for the model, and as functions the host
reuses (task references `@server:uri`, prompt expansion for slash commands).

Contract:
- A server that declares the `resources` capability gets `<server>__mcp_list_resources` (its
  resources and resource templates) and `<server>__mcp_read_resource` (one URI); one that
  declares `prompts` gets `<server>__mcp_list_prompts` and `<server>__mcp_get_prompt`. They are
  external, Cold, READ, closed-world specs tagged like an annotated read-only MCP tool, so
  profiles, presets and the judgement ring treat them as any read-only tool. A server tool of the
  same name wins; ours is not offered and a note says so.
- Everything a server returns is untrusted: names, titles and descriptions are cleaned
  (`specs.clean_text`); contents are rendered by `content` (text kept, binary as type and size)
  and still pass the host's neutraliser on their way to the model. Listings stop at
  `LIST_LIMIT` entries with a visible line saying how many were left out.
- Each operation is bounded by the server's `tool_timeout`. Failures raise `ToolFailure`: not
  connected ⇒ OVERLOADED; an unknown resource or prompt (-32002, -32601, or -32602 "… not
  found", the 2025-11-25 form) ⇒ NOT_FOUND; other invalid arguments (-32602) ⇒ INVALID_ARGS;
  a broken connection ⇒ TRANSIENT (the link reconnects); anything else ⇒ UNKNOWN. Nothing here
  writes, so no outcome is ever uncertain.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import anyio
from mcp import ClientSession
from mcp.shared.exceptions import MCPError

from yagent.kernel.judge import toolfail
from yagent.tools.adapter import Executor, ToolContext
from yagent.tools.mcp.content import render_block, render_content
from yagent.tools.mcp.link import Link, ServerUnavailable, describe
from yagent.tools.mcp.specs import clean_text, spec_name
from yagent.toolspec import Effect, Spec, Tier

LIST_RESOURCES = "mcp_list_resources"
READ_RESOURCE = "mcp_read_resource"
LIST_PROMPTS = "mcp_list_prompts"
GET_PROMPT = "mcp_get_prompt"
LIST_LIMIT = 200
_NOT_FOUND = {-32002, -32601}


async def list_resources(session: ClientSession) -> str:
    listed = await session.list_resources()
    templates = await session.list_resource_templates()
    lines = [
        f"{clean_text(r.uri, 300)} — {clean_text(r.title or r.name, 120)}"
        + (f" ({r.mime_type})" if r.mime_type else "")
        + (f": {clean_text(r.description, 200)}" if r.description else "")
        for r in listed.resources
    ]
    lines += [
        f"template {clean_text(t.uri_template, 300)} — {clean_text(t.title or t.name, 120)}"
        + (f": {clean_text(t.description, 200)}" if t.description else "")
        for t in templates.resource_templates
    ]
    if listed.next_cursor:
        lines.append("[the server has more resources than one page; yagent shows the first]")
    return _capped(lines, "resources")


async def read_resource(session: ClientSession, uri: str) -> str:
    result = await session.read_resource(uri)
    return "\n".join(render_block(_Embedded(c)) for c in result.contents)


async def list_prompts(session: ClientSession) -> str:
    listed = await session.list_prompts()
    lines = []
    for p in listed.prompts:
        args = ", ".join(
            clean_text(a.name, 64) + ("" if a.required else "?") for a in p.arguments or ()
        )
        lines.append(
            f"{clean_text(p.name, 64)}({args})"
            + (f" — {clean_text(p.description, 200)}" if p.description else "")
        )
    return _capped(lines, "prompts")


async def get_prompt(session: ClientSession, name: str, arguments: dict[str, str]) -> str:
    """The prompt's messages as text, one `role:` paragraph each (a slash command reuses it)."""
    result = await session.get_prompt(name, arguments)
    return "\n\n".join(f"{m.role}: {render_content([m.content])}" for m in result.messages)


class _Embedded:
    """A resource content as an embedded-resource block, so `content` renders it one way."""

    type = "resource"

    def __init__(self, resource: Any) -> None:
        self.resource = resource


def _capped(lines: list[str], what: str) -> str:
    if not lines:
        return f"(the server lists no {what})"
    if len(lines) > LIST_LIMIT:
        left = len(lines) - LIST_LIMIT
        lines = [*lines[:LIST_LIMIT], f"[{left} more {what} not shown]"]
    return "\n".join(lines)


async def run_bounded(link: Link, op: Callable[[ClientSession], Awaitable[str]]) -> str:
    """One operation on the server's live session, bounded, its failures classified."""
    server = link.config.name
    try:
        session = await link.session()
    except ServerUnavailable as exc:
        raise toolfail.ToolFailure(toolfail.Kind.OVERLOADED, str(exc)) from None
    try:
        with anyio.fail_after(link.config.tool_timeout):
            return await op(session)
    except TimeoutError:
        raise toolfail.ToolFailure(
            toolfail.Kind.TIMEOUT,
            f"MCP server {server} did not answer within {link.config.tool_timeout:g} s",
        ) from None
    except MCPError as exc:
        code, text = exc.error.code, clean_text(exc.error.message, 500)
        # 2025-11-25 answers an unknown resource with -32602 "… not found" (earlier: -32002)
        if code in _NOT_FOUND or (code == -32602 and "not found" in text.lower()):
            raise toolfail.ToolFailure(toolfail.Kind.NOT_FOUND, f"{server}: {text}") from None
        kind = toolfail.Kind.INVALID_ARGS if code == -32602 else toolfail.Kind.UNKNOWN
        raise toolfail.ToolFailure(kind, f"{server} answered error {code}: {text}") from None
    except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError) as exc:
        link.lost(f"the connection broke: {describe(exc)}")
        raise toolfail.ToolFailure(
            toolfail.Kind.TRANSIENT, f"MCP server {server}: the connection broke ({describe(exc)})"
        ) from None


def _spec(server: str, name: str, description: str, schema: dict[str, Any], t: float) -> Spec:
    return Spec(
        spec_name(server, name),
        description,
        schema,
        Effect.READ,
        Tier.COLD,
        brief=description.split(".")[0],
        tags=frozenset({"mcp", server, "annotated", "read-only", "idempotent"}),
        external=True,
        own_timeout=lambda _args: t,
    )


def _string(description: str) -> dict[str, Any]:
    return {"type": "string", "description": description}


def offered(link: Link) -> list[tuple[Spec, Executor]]:
    """The resource and prompt tools this server's declared capabilities allow."""
    server, caps, t = link.config.name, link.capabilities, link.config.tool_timeout
    out: list[tuple[Spec, Executor]] = []
    if getattr(caps, "resources", None) is not None:
        listing = _spec(
            server,
            LIST_RESOURCES,
            f"List the resources and resource templates of MCP server {server}.",
            {"type": "object", "properties": {}},
            t,
        )
        reading = _spec(
            server,
            READ_RESOURCE,
            f"Read one resource of MCP server {server} by its URI.",
            {
                "type": "object",
                "properties": {"uri": _string("the resource URI")},
                "required": ["uri"],
            },
            t,
        )

        async def do_list(ctx: ToolContext, args: Any) -> dict[str, Any]:
            return {"content": await run_bounded(link, list_resources)}

        async def do_read(ctx: ToolContext, args: Any) -> dict[str, Any]:
            uri = str(dict(args).get("uri", ""))
            return {"content": await run_bounded(link, lambda s: read_resource(s, uri))}

        out += [(listing, do_list), (reading, do_read)]
    if getattr(caps, "prompts", None) is not None:
        plisting = _spec(
            server,
            LIST_PROMPTS,
            f"List the prompts of MCP server {server}, with their arguments (? = optional).",
            {"type": "object", "properties": {}},
            t,
        )
        getting = _spec(
            server,
            GET_PROMPT,
            f"Get one prompt of MCP server {server}, filled with its arguments.",
            {
                "type": "object",
                "properties": {
                    "name": _string("the prompt's name"),
                    "arguments": {"type": "object", "additionalProperties": {"type": "string"}},
                },
                "required": ["name"],
            },
            t,
        )

        async def do_plist(ctx: ToolContext, args: Any) -> dict[str, Any]:
            return {"content": await run_bounded(link, list_prompts)}

        async def do_get(ctx: ToolContext, args: Any) -> dict[str, Any]:
            data = dict(args)
            name = str(data.get("name", ""))
            given = data.get("arguments") or {}
            values = {str(k): str(v) for k, v in given.items()} if isinstance(given, dict) else {}
            return {"content": await run_bounded(link, lambda s: get_prompt(s, name, values))}

        out += [(plisting, do_plist), (getting, do_get)]
    return out
