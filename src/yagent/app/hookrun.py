"""The configured hooks at work in an app: which event fires where, and what its answer does.

Guarantees (events are `tools.hooknames.EVENTS`; a hook's answer is `tools.hooks`'):
- `pre_tool_use`: a ring of every call's judgement (`RunHooks.stage`): DENY refuses the call,
  PROMPT puts the hook's question to the person (refused, saying nobody could be asked, when no
  one can answer), ALLOW is "no objection" — it never lifts another ring's refusal or question.
- `post_tool_use`: after a call ran; a DENY cannot undo it, so its reason is added to the result
  the model reads (`hook_feedback`).
- `user_prompt_submit`: before the task reaches the model; a DENY refuses the run (the model is
  never asked; `RunHooks.prompt` returns the reason).
- `session_start` (source `startup` or `resume`): once per session in this process, before
  its first run; `session_end`: for each of them when the app closes (`AppHooks.end_sessions`).
- `stop` at the end of a top-level run, `subagent_stop` at the end of a sub-agent's (a task of
  a parallel run); `pre_compact` before each compaction. These report: their answer is shown,
  it cannot continue the run or keep the context whole.
- Every hook that ran is published as one `hook` event (event, hook, status, decision, reason,
  tool, call id), failures and non-blocking hooks included: nothing a hook says is silent.
- Every event carries `session_id`, `cwd` and `transcript_path`: the session's stored messages
  as JSON lines (yagent's message objects, not Claude Code's format), brought up to date before
  the hooks of the event run; nothing is written unless a hook matches.
Left to the caller: the order of events within a run (`app.turn`) and where compaction happens.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from yagent.kernel.judge import hookengine
from yagent.kernel.judge.invoke import Call, Decision
from yagent.memory import SessionStore
from yagent.tools import hooknames
from yagent.tools.toolresult import ToolResult

Publish = Callable[[str, Mapping[str, Any]], None]


class AppHooks:
    """The app's hook engine, and the sessions whose `session_start` fired in this process."""

    def __init__(
        self, engine: hookengine.Engine, *, workspace: Path, home: Path, store: SessionStore
    ) -> None:
        self.engine = engine
        self.workspace = workspace
        self.home = home
        self.store = store
        self.started: dict[str, RunHooks] = {}

    def for_run(
        self, session_id: str, publish: Publish, agent: str, delegation_id: str = ""
    ) -> RunHooks:
        return RunHooks(self, session_id, publish, agent, delegation_id)

    async def end_sessions(self, reason: str = "other") -> None:
        """`session_end` for every session this process started, once."""
        while self.started:
            _, run = self.started.popitem()
            await run.fire(hooknames.SESSION_END, reason, reason=reason)


class RunHooks:
    """One run's view of the hooks: its session, its publisher, its transcript."""

    def __init__(
        self, app: AppHooks, session_id: str, publish: Publish, agent: str, delegation_id: str
    ) -> None:
        self._app = app
        self.session_id = session_id
        self._publish = publish
        self._agent = agent
        self._delegation = delegation_id
        self.transcript = app.home / "state" / session_id / "transcript.jsonl"
        self._written = -1  # the last message seq copied into the transcript

    # -- the ring -----------------------------------------------------------------------------
    def stage(self) -> hookengine.HookStage | None:
        """The `pre_tool_use` ring; None when no hook is for that event."""
        if not any(h.event == hooknames.PRE_TOOL_USE for h in self._app.engine.hooks):
            return None
        return hookengine.stage(
            self._app.engine,
            observe=self._observed,
            context=self._context,
            aliases=hooknames.tool_aliases,
        )

    async def after_call(self, call: Call, result: ToolResult) -> ToolResult:
        """`post_tool_use`: a DENY's reason joins the result the model reads."""
        fields = {
            "tool": call.tool,
            "args": dict(call.args),
            "call_id": call.call_id,
            "tool_response": result.content,
        }
        event = self._event(hooknames.POST_TOOL_USE, call.tool, fields)
        if not self._app.engine.matching(event):
            return result
        outcome = await self._evaluate(event)
        if outcome.decision is Decision.ALLOW:
            return result
        content = _with_feedback(result.content, outcome.reason)
        return ToolResult(
            result.call_id,
            result.name,
            result.ok,
            content,
            result.kind,
            result.data,
            result.judgement,
        )

    # -- lifecycle ----------------------------------------------------------------------------
    async def session_start(self, *, continued: bool) -> None:
        if self.session_id in self._app.started:
            return
        self._app.started[self.session_id] = self
        source = "resume" if continued else "startup"
        await self.fire(hooknames.SESSION_START, source, source=source)

    async def prompt(self, task: str) -> str | None:
        """`user_prompt_submit`: None when the task may go on, else why it may not."""
        result = await self.fire(hooknames.USER_PROMPT_SUBMIT, "", prompt=task)
        if result is None or result.decision is not Decision.DENY:
            return None
        return f"the prompt was blocked by a hook: {result.reason}"

    async def stopped(self, status: str, *, sub_agent: bool) -> None:
        name = hooknames.SUBAGENT_STOP if sub_agent else hooknames.STOP
        await self.fire(name, "", status=status, stop_hook_active=False, agent=self._agent)

    async def before_compact(self, _facts: Mapping[str, Any]) -> None:
        await self.fire(hooknames.PRE_COMPACT, "auto", trigger="auto", custom_instructions="")

    async def fire(self, name: str, subject: str, **fields: Any) -> hookengine.Result | None:
        """Run the hooks of a tool-less event; None when none matched. A hook's matcher is
        tested against `subject` (`startup`, `auto`…)."""
        event = self._event(name, subject, fields)
        if not self._app.engine.matching(event):
            return None
        return await self._evaluate(event)

    # -- plumbing -----------------------------------------------------------------------------
    def _event(self, name: str, subject: str, fields: Mapping[str, Any]) -> hookengine.Event:
        payload = {"session_id": self.session_id, "cwd": str(self._app.workspace), **fields}
        payload["transcript_path"] = str(self.transcript)
        aliases = hooknames.tool_aliases(subject) if name in hooknames.TOOL_EVENTS else ()
        return hookengine.Event(name, subject, payload, aliases)

    def _context(self, call: Call) -> dict[str, Any]:
        probe = self._event(hooknames.PRE_TOOL_USE, call.tool, {})
        if self._app.engine.matching(probe):  # a hook will read the transcript: bring it up
            self._refresh()
        return {
            "session_id": self.session_id,
            "cwd": str(self._app.workspace),
            "transcript_path": str(self.transcript),
        }

    async def _evaluate(self, event: hookengine.Event) -> hookengine.Result:
        self._refresh()
        result = await self._app.engine.evaluate(event)
        self._observed(result)
        return result

    def _observed(self, result: hookengine.Result) -> None:
        tool_event = result.event.name in hooknames.TOOL_EVENTS
        for run in result.runs:
            self._publish(
                "hook",
                {
                    "agent": self._agent,
                    "delegation_id": self._delegation,
                    "event": result.event.name,
                    "hook": run.hook,
                    "blocking": run.blocking,
                    "status": run.status.value,
                    "decision": run.decision.value,
                    "reason": run.reason,
                    "tool": result.event.tool if tool_event else "",
                    "call_id": str(result.event.payload.get("call_id", "")),
                },
            )

    def _refresh(self) -> None:
        """Copy the session's messages not yet in the transcript into it."""
        fresh = [
            m
            for m in self._app.store.messages(self.session_id)
            if int(m.get("seq", 0)) > self._written
        ]
        self.transcript.parent.mkdir(parents=True, exist_ok=True)
        with self.transcript.open("a" if self._written >= 0 else "w", encoding="utf-8") as out:
            for message in fresh:
                out.write(json.dumps(message, ensure_ascii=False, default=str) + "\n")
        if fresh:
            self._written = int(fresh[-1].get("seq", 0))
        self._written = max(self._written, 0)


def _with_feedback(content: str, reason: str) -> str:
    """`content` with the hook's word added: a key of a JSON object, else a line below."""
    try:
        body = json.loads(content)
    except (json.JSONDecodeError, TypeError):
        body = None
    if isinstance(body, dict):
        return json.dumps({**body, "hook_feedback": reason}, ensure_ascii=False)
    return f"{content}\n[hook_feedback] {reason}"
