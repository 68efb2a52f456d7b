"""What an MCP server may ask of yagent: its roots, data from the person (elicitation), and a
completion from the session's model (sampling).

Contract:
- Roots: every server is told the workspace as its one root (a `file://` URI), and the
  capability is declared so servers that need roots can offer their tools.
- Elicitation is declared for every server. A request is put to the person through the same
  question path `ask_user_for_help` uses (the call's `ToolContext.confirm`). yagent never
  invents data: with no person attached (`--json`, no terminal) or no tool call of that server in
  flight, the request is declined, whatever `-y` says — `-y` answers yagent's own approval
  questions, not requests for the person's data. The answer is a JSON object (or, for a form of
  one text field, plain text); fields the form does not ask for, or whose type is wrong, decline
  the request with that reason rather than send something the server did not ask for. An empty
  answer declines. URL-mode elicitation is declined (yagent opens no browser for a server).
- Sampling is declared only for a server whose config says `sampling = true`. Each request is
  judged by the audit gate as a mutating, low-risk operation ("<server> sampling"): a DENY is
  final; otherwise, like an open-world tool, a person approves each request unless `-y` stands
  (no person and no `-y`: refused). It then runs through the host's `Sampler` (the
  session's engine, its usage counted in the session) with the server's own system prompt and
  messages only — never yagent's context or tools. Server text passes `reminder.neutralize`.
  Images in a sampling request become a placeholder naming their type and size.
- A server's `notifications/tools/list_changed` is passed to `list_changed(server)`.
- Every outcome is published as an `mcp_request` event (server, what, outcome, reason) when the
  call's context carries a publisher; nothing here raises into the SDK's receive loop.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import mcp_types as types
from mcp import ClientSession

from yagent.kernel.context import reminder
from yagent.kernel.judge import auditgate
from yagent.tools.adapter import ToolContext
from yagent.tools.invocation import PUBLISH
from yagent.tools.mcp.config import ServerConfig
from yagent.tools.mcp.content import render_block
from yagent.tools.mcp.sampling import SAMPLER_KEY, Sampler, SampleReply, SampleRequest
from yagent.tools.mcp.specs import clean_text
from yagent.tools.yolo import Yolo

__all__ = ["SAMPLER_KEY", "Inbound", "SampleReply", "SampleRequest", "Sampler"]

MESSAGE_LIMIT = 2000
SAMPLE_TOKENS_CAP = 4096


@dataclass
class Inbound:
    """Builds each server's `ClientSession` with the callbacks it is entitled to."""

    workspace: Path | None = None
    calls: dict[str, list[ToolContext]] = field(default_factory=dict)
    list_changed: Callable[[str], None] = lambda _server: None  # set by `McpTools`

    def session(self, config: ServerConfig, read: Any, write: Any) -> ClientSession:
        shared = (
            [types.Root(uri=self.workspace.resolve().as_uri(), name="workspace")]
            if self.workspace is not None
            else []
        )

        async def roots(context: Any) -> types.ListRootsResult:
            return types.ListRootsResult(roots=shared)

        async def elicit(context: Any, params: Any) -> types.ElicitResult:
            return await self._elicit(config.name, params)

        async def sample(context: Any, params: Any) -> types.CreateMessageResult | types.ErrorData:
            return await self._sample(config.name, params)

        async def notified(message: Any) -> None:
            if isinstance(message, types.ToolListChangedNotification):
                self.list_changed(config.name)

        return ClientSession(
            read,
            write,
            message_handler=notified,
            list_roots_callback=roots,
            elicitation_callback=elicit,
            sampling_callback=sample if config.sampling else None,
        )

    @contextmanager
    def during(self, server: str, ctx: ToolContext | None) -> Iterator[None]:
        """While a call to `server` runs, its context answers that server's requests."""
        if ctx is None:
            yield
            return
        stack = self.calls.setdefault(server, [])
        stack.append(ctx)
        try:
            yield
        finally:
            stack.remove(ctx)

    def _current(self, server: str) -> ToolContext | None:
        stack = self.calls.get(server) or []
        return stack[-1] if stack else None

    def _said(
        self, ctx: ToolContext | None, server: str, what: str, outcome: str, why: str
    ) -> None:
        publish = ctx.services.get(PUBLISH) if ctx is not None else None
        if publish is not None:
            payload = {"server": server, "request": what, "outcome": outcome, "reason": why}
            publish("mcp_request", payload)

    async def _elicit(self, server: str, params: Any) -> types.ElicitResult:
        ctx = self._current(server)
        decline = types.ElicitResult(action="decline")
        if getattr(params, "mode", "form") == "url":
            self._said(ctx, server, "elicitation", "declined", "URL-mode elicitation")
            return decline
        if ctx is None or ctx.confirm is None:
            why = "no person is attached to this run (yagent never invents the data)"
            self._said(ctx, server, "elicitation", "declined", why)
            return decline
        schema = getattr(params, "requested_schema", None) or {}
        fields = dict(schema.get("properties") or {}) if isinstance(schema, Mapping) else {}
        question = f"MCP server {server} asks: {clean_text(params.message, MESSAGE_LIMIT)}\n" + (
            "Answer with a JSON object of these fields (empty answer declines): "
            + ", ".join(f"{clean_text(k, 64)} ({_kind(v)})" for k, v in fields.items())
        )
        answer = await ctx.confirm.ask(
            "question", {"question": question, "options": []}, delegation_id=ctx.delegation_id
        )
        if not answer.approved or answer.timed_out or not answer.text.strip():
            self._said(ctx, server, "elicitation", "declined", answer.text or "no answer")
            return decline
        content, why = _content(answer.text, fields)
        if content is None:
            self._said(ctx, server, "elicitation", "declined", why)
            return decline
        self._said(ctx, server, "elicitation", "accepted", f"fields: {sorted(content)}")
        return types.ElicitResult(action="accept", content=content)

    async def _sample(
        self, server: str, params: Any
    ) -> types.CreateMessageResult | types.ErrorData:
        ctx = self._current(server)

        def refuse(why: str) -> types.ErrorData:
            self._said(ctx, server, "sampling", "refused", why)
            return types.ErrorData(code=-1, message=f"yagent refused sampling: {why}")

        if ctx is None:
            return refuse("no tool call of this server is in flight")
        sampler = ctx.services.get(SAMPLER_KEY)
        if sampler is None:
            return refuse("this host has no model to sample")
        gate = ctx.surface.options.audit or auditgate.AuditGate()
        audit = gate.decide(auditgate.Op(f"{server} sampling", auditgate.Level.LOW.value, True))
        if audit.decision is auditgate.Decision.DENY:
            return refuse(audit.reason)
        if ctx.surface.guard.yolo < Yolo.YOLO:  # like an open-world tool: a person answers
            if ctx.confirm is None:
                return refuse("sampling needs a person's approval (or -y) and none is attached")
            answer = await ctx.confirm.ask(
                "approval",
                {
                    "tool": f"{server} sampling",
                    "reason": f"MCP server {server} asks to use your model",
                    "args": {"messages": len(params.messages)},
                },
                delegation_id=ctx.delegation_id,
            )
            if not answer.approved:
                return refuse(answer.text or "the person said no")
        request = SampleRequest(
            server,
            reminder.neutralize(params.system_prompt or ""),
            tuple((m.role, _sampled_text(m.content)) for m in params.messages),
            max(1, min(int(params.max_tokens), SAMPLE_TOKENS_CAP)),
            params.temperature,
        )
        try:
            reply = await sampler(request)
        except Exception as exc:  # the model failed: the server gets an error, the run goes on
            return refuse(f"the model call failed: {type(exc).__name__}: {exc}")
        self._said(ctx, server, "sampling", "answered", f"model {reply.model}")
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text=reply.text),
            model=reply.model,
            stop_reason=reply.stop_reason,
        )


def _kind(schema: Any) -> str:
    if not isinstance(schema, Mapping):
        return "any"
    kind = str(schema.get("type", "any"))
    if "enum" in schema:
        kind += " one of " + ", ".join(map(str, schema["enum"]))[:200]
    return kind


_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "boolean": (bool,),
    "integer": (int,),
    "number": (int, float),
    "array": (list,),
}


def _content(text: str, fields: Mapping[str, Any]) -> tuple[dict[str, Any] | None, str]:
    """The person's answer as form content, or None and why it cannot be sent."""
    try:
        data: Any = json.loads(text)
    except ValueError:
        strings = [
            k for k, v in fields.items() if isinstance(v, Mapping) and v.get("type") == "string"
        ]
        if len(fields) == 1 and strings:
            return {strings[0]: text.strip()}, ""
        return None, "the answer is not a JSON object of the requested fields"
    if not isinstance(data, dict):
        return None, "the answer is not a JSON object of the requested fields"
    extra = sorted(set(data) - set(fields))
    if extra:
        return None, f"the answer has fields the server did not ask for: {extra}"
    for key, value in data.items():
        want = fields[key].get("type") if isinstance(fields[key], Mapping) else None
        allowed = _TYPES.get(str(want))
        bad_bool = want in ("integer", "number") and isinstance(value, bool)
        if allowed is not None and (not isinstance(value, allowed) or bad_bool):
            return None, f"field {key!r} should be {want}"
    return data, ""


def _sampled_text(content: Any) -> str:
    blocks = content if isinstance(content, list) else [content]
    return reminder.neutralize("\n".join(render_block(b) for b in blocks))
