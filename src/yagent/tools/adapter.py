"""Adapter.call: the one way a tool call runs.

Contract — four steps, in this order:
1. JSON-parse the arguments. A failure is not an error: the raw string becomes `{"input": raw}`
   (tools that take free text live on this).
2. Workspace boundary, 3. dangerous-operation authorization — both are rings of the Surface's
   `invoke` chain (after the host stages and the tooldisclose gate); a PROMPT is put to the
   person through the authorization loop, and an approval's scope becomes a standing permission.
4. Execution: arguments validated against the tool's model, the executor run, the result
   serialised with `json.dumps` (a `WithImages` result keeps its images beside the text, in
   `ToolResult.images`). An executor returning something unserialisable is an error
   result, never an empty one. Failures are classified with `toolfail`; the model reads the kind,
   whether to retry, and the table's guidance.
Time: `time_limit` (the host's per-call backstop) covers step 4 only — never the judgement or a
person's answer to an approval question — and is raised above the tool's own declared bound
(`Spec.execution_limit`), so a tool's own timeout fires first with its partial output; the
backstop firing is a TIMEOUT result that says the limit it hit.
The call's paths are resolved once, before step 2 (`WorkspaceGuard.pinned`): the rings judge and
the executor uses that one resolution.
Every call gets exactly one `ToolResult`; its content passes pii's MODEL surface when the context
has a pii store (`outbound.for_model`: masked, or withheld visibly under a block policy).
A "remember" answer (`Scope.RULE`) to a shell command becomes an allow rule (`CommandGate`).
A yes to a local-opening question (`tools.localask`: the payload's `opening`) opens that local
service for the session — "always" (`Scope.PROJECT`) remembers it for the project in the
person's settings — and grants nothing else.
A question nobody could be put to (no person attached, or a UI that says it has nobody to ask)
is a NEEDS_APPROVAL refusal saying so and giving the question — never "the user did not
approve". `after_call`, when the context has one, sees every executed call's result and may
return it amended (the host's post-tool hooks), before pii's MODEL surface.
The executor receives a per-call copy of the context whose `call` is its own `Invocation` (call
id, tool, arguments, caller, depth): parallel calls never see each other's call id; its
`services` are the run's limited to what the executor declared (`tools.invocation.needs`), and
`unmet()` names every granted tool whose required services the host did not set.
A call the context's `effects` runner classifies as an external side effect runs through it (at
most once per call id, `tools.effectrun`) instead of calling the executor directly.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import anyio
from pydantic import ValidationError

from yagent.kernel.confine.pii import PolicyStore as PiiStore
from yagent.kernel.context.spill import Spill
from yagent.kernel.judge import toolfail
from yagent.kernel.judge.invoke import Call, Judgement, Verdict
from yagent.tools import localask, outbound
from yagent.tools.confirm import Scope, UserConfirm
from yagent.tools.effectrun import EffectRunner
from yagent.tools.invocation import (
    NO_CALL,
    NO_NEEDS,
    Invocation,
    MissingServiceError,
    Needs,
    Services,
    declared,
)
from yagent.tools.surface import Surface
from yagent.tools.toolresult import ToolResult, failure_content, serialise
from yagent.toolspec import SkillSource, Spec

log = logging.getLogger("yagent.tools.adapter")

Executor = Callable[["ToolContext", Any], Awaitable[Any]]
AfterCall = Callable[[Call, ToolResult], Awaitable[ToolResult]]


@dataclass(slots=True)
class ToolContext:
    """What an executor may use: one per run, and a per-call copy of it whose `call` is the
    executor's own `Invocation` (`for_call`). Executors never reach around it; `services` is the
    host's typed extension seam (`tools.invocation`)."""

    workspace: Path
    surface: Surface
    session_id: str = ""
    delegation_id: str = ""
    confirm: UserConfirm | None = None
    skills: SkillSource | None = None
    state_dir: Path | None = None  # per-session scratch (background logs…); None: a temp dir
    spill: Spill | None = None  # where cut tool outputs are stored (read_spill pages them)
    pii: PiiStore | None = None  # results pass its MODEL surface before the model sees them
    effects: EffectRunner | None = None  # side-effecting calls run through it, at most once
    after_call: AfterCall | None = None  # the host's look at each executed call's result
    services: Services = field(default_factory=Services)
    call: Invocation = NO_CALL  # the call being executed (set on the per-call copy only)

    def for_call(self, call: Invocation, needs: Needs = NO_NEEDS) -> ToolContext:
        """This run's context as one call's executor sees it: `call` its own, the run's services
        limited to what the executor declared (`needs`)."""
        return replace(self, call=call, services=self.services.only(needs, call.tool))


def parse_arguments(raw: str | Mapping[str, Any] | None) -> dict[str, Any]:
    """Step 1: a JSON object, or `{"input": raw}` when the text is not one (nested deeper than
    the parser goes included: the schema then refuses it as invalid arguments)."""
    if raw is None or raw == "":
        return {}
    if isinstance(raw, Mapping):
        return dict(raw)
    try:
        value = json.loads(raw)
    except (json.JSONDecodeError, TypeError, RecursionError):
        return {"input": raw}
    return value if isinstance(value, dict) else {"input": raw}


def _unasked(judgement: Judgement, why: list[str]) -> str:
    """The refusal of a call whose question nobody could answer, with the question asked."""
    question = judgement.trace[-2] if len(judgement.trace) > 1 else judgement.verdict
    return (
        f"not run: this call needs a person's approval and nobody could be asked ({why[0]}); "
        f"the question was: {question.reason}"
    )


class Adapter:
    def __init__(self, ctx: ToolContext, executors: Mapping[str, Executor]) -> None:
        self.ctx = ctx
        self._executors = dict(executors)

    @property
    def surface(self) -> Surface:
        return self.ctx.surface

    def unmet(self) -> list[str]:
        """For every tool the surface grants, the required services its executor declared
        (`tools.invocation.needs`) that the context does not hold: one line per tool, empty
        when every one is set. The host asks once its services are put, before the first call."""
        lines = []
        for spec in self.surface.specs():
            executor = self._executors.get(spec.name)
            absent = self.ctx.services.missing(declared(executor))
            if absent:
                labels = ", ".join(s.label for s in absent)
                lines.append(f"{spec.name} needs service(s) the host did not set: {labels}")
        return lines

    def require_services(self) -> None:
        """`MissingServiceError` listing `unmet()`, when anything is unmet."""
        lines = self.unmet()
        if lines:
            raise MissingServiceError("; ".join(lines))

    def learn(self, executors: Mapping[str, Executor]) -> None:
        """External executors that appeared while running (an MCP server's tools changed); a
        name this adapter already runs keeps its executor."""
        for name, execute in executors.items():
            self._executors.setdefault(name, execute)

    async def call(
        self,
        name: str,
        raw_args: str | Mapping[str, Any] | None,
        call_id: str = "",
        *,
        caller: str = "",
        depth: int = 0,
        time_limit: float | None = None,
    ) -> ToolResult:
        """Run one call; `time_limit`: the backstop for its execution (None: none)."""
        args = parse_arguments(raw_args)
        call = Call(name, args, call_id=call_id, caller=caller, depth=depth)

        async def execute(c: Call) -> ToolResult:
            return await self._execute(c, time_limit)

        spec = self.surface.spec(name)
        unasked: list[str] = []  # why a question could not be put to anyone

        async def approve(c: Call, verdict: Verdict) -> bool:
            return await self._approve(c, verdict, unasked)

        # One resolution of the call's paths for every ring and the executor (`guard.pinned`).
        with self.surface.guard.pinned(spec.arg_paths_of(args) if spec is not None else ()):
            outcome = await self.surface.chain.invoke(call, execute, approve=approve)
        if not outcome.executed:
            verdict = outcome.verdict
            kind = verdict.kind or toolfail.Kind.PERMISSION
            reason = verdict.reason
            if unasked:  # nobody was asked: never "the user did not approve"
                kind, reason = toolfail.Kind.NEEDS_APPROVAL, _unasked(outcome.judgement, unasked)
            content = failure_content(kind, reason, stage=verdict.stage)
            refused = ToolResult(call_id, name, False, content, kind, judgement=outcome.judgement)
            return self._for_model(refused)
        result = outcome.result
        assert result is not None  # _execute always returns a ToolResult
        done = ToolResult(
            call_id,
            name,
            result.ok,
            result.content,
            result.kind,
            result.data,
            outcome.judgement,
            result.images,
        )
        if self.ctx.after_call is not None:
            done = await self.ctx.after_call(call, done)
        return self._for_model(done)

    async def _approve(self, call: Call, verdict: Verdict, unasked: list[str]) -> bool:
        confirm = self.ctx.confirm
        spec = self.surface.spec(call.tool)
        if spec is None:
            return False
        if confirm is None:
            unasked.append("this run has no person attached to answer questions")
            return False
        opening = localask.opening_of(verdict, call, self.surface)
        payload = {"tool": call.tool, "args": dict(call.args), "reason": verdict.reason}
        if opening:
            payload["opening"] = opening
        answer = await confirm.ask("authorization", payload, delegation_id=self.ctx.delegation_id)
        if not answer.asked:
            unasked.append(answer.text or "there was nobody to ask")
            return False
        if answer.approved and opening:
            self._open(opening, answer.scope)
        elif answer.approved:
            self._remember(spec, answer.scope, call)
        return answer.approved

    def _open(self, opening: str, scope: Scope) -> None:
        """A yes to a local-opening question: open it for the session; "always" (PROJECT)
        remembers it for the project in the person's settings too."""
        openings = self.surface.options.openings
        guard = self.surface.guard
        if openings is not None:
            openings.open(opening)
        if scope is Scope.PROJECT and guard.settings is not None:
            guard.settings.remember_local_opening(guard.workspace, opening)

    def _for_model(self, result: ToolResult) -> ToolResult:
        """The result as the model may see it: through pii's MODEL surface when configured."""
        return result if self.ctx.pii is None else outbound.for_model(result, self.ctx.pii)

    def _remember(self, spec: Spec, scope: Scope, call: Call) -> None:
        guard = self.surface.guard
        commands = self.surface.options.commands
        if scope is Scope.RULE:
            line = call.args.get(spec.command_arg) if spec.command_arg else None
            if commands is not None and isinstance(line, str):
                done = commands.remember(line)
                if done.skipped:
                    log.warning("not remembered for %r: %s", line, "; ".join(done.skipped))
            return  # for any other tool, "remember" is an approval of this call only
        if scope is Scope.TOOL:
            guard.allow_tool_for_session(spec.name)
        elif scope is Scope.SESSION:
            guard.skip_all_for_session()
        elif scope is Scope.PROJECT and guard.settings is not None:
            guard.settings.authorize_project(guard.workspace)

    async def _execute(self, call: Call, time_limit: float | None) -> ToolResult:
        spec = self.surface.spec(call.tool)
        executor = self._executors.get(call.tool)
        if spec is None or executor is None:
            kind = toolfail.Kind.FORBIDDEN
            return ToolResult(
                call.call_id,
                call.tool,
                False,
                failure_content(kind, f"no executor for tool {call.tool!r}"),
                kind,
            )
        try:
            args: Any = spec.model.model_validate(dict(call.args)) if spec.model else call.args
        except ValidationError as exc:
            kind = toolfail.Kind.INVALID_ARGS
            errors = [
                f"{'.'.join(map(str, e['loc'])) or '(args)'}: {e['msg']}" for e in exc.errors()
            ]
            msg = f"invalid arguments for {call.tool}: " + "; ".join(errors)
            return ToolResult(call.call_id, call.tool, False, failure_content(kind, msg), kind)
        limit = spec.execution_limit(call.args, time_limit)
        with anyio.move_on_after(limit):
            return await self._run(spec, executor, call, args)
        kind = toolfail.Kind.TIMEOUT
        msg = f"{call.tool} did not finish within {limit:g}s and was stopped"
        return ToolResult(call.call_id, call.tool, False, failure_content(kind, msg), kind)

    async def _run(self, spec: Spec, executor: Executor, call: Call, args: Any) -> ToolResult:
        effects = self.ctx.effects
        found = effects.classify(spec, args) if effects is not None else None
        ctx = self.ctx.for_call(
            Invocation(call.call_id, call.tool, call.args, call.caller, call.depth),
            declared(executor),
        )
        if effects is not None and found is not None:
            return await effects.run(found, call, lambda: executor(ctx, args))
        try:
            data = await executor(ctx, args)
        except Exception as exc:
            kind = toolfail.classify(exc)
            msg = f"{call.tool} failed: {type(exc).__name__}: {exc}"
            return ToolResult(call.call_id, call.tool, False, failure_content(kind, msg), kind)
        return serialise(call.call_id, call.tool, data)
