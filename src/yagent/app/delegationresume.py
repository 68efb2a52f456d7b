"""Resuming a delegator whose delegate calls a dead process left without a result.

Contract (Director constraints C12 and C13), for every call in the history whose Spec's effect is
`DELEGATE` and that has no result, before the run's other open calls are settled
(`runtrack.settle`, which would only say "interrupted"):
- its delegation is found on the board by the delegator's session and the call id;
- done (or failed) on the board → the outcome recorded there is the result; nothing runs again;
- a child run interrupted mid-way (`app.durable.decide` says CONTINUE for its delegation id) →
  the child continues from its checkpoint (its history, its step count; calls the dead process
  left open are settled, side effects never re-run: their keys carry the delegation id) and its
  outcome is the result;
- never posted, or posted but never started → it starts now, as the call asked;
- anything else (the child's run concluded but its outcome was never recorded, or its record
  cannot be read) → a *degraded handoff*: a failed outcome whose output is a report built from
  the child's recorded calls, the files it wrote and its last text, with every reason listed —
  never an exception.
Every result goes through `format_for_director` and is stored as the call's tool message.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Sequence

from yagent.agents import untrusted
from yagent.app import delegationview
from yagent.app.delegation import Refused, Runner, board_id
from yagent.app.delegationview import Outcome
from yagent.app.durable import Action
from yagent.app.services import ResumeServices
from yagent.kernel.durable import taskboard
from yagent.kernel.judge import delegate
from yagent.llm import Message, ToolCall
from yagent.memory import ToolCallNotFoundError
from yagent.tools.hostservices import Request
from yagent.tools.surface import Surface
from yagent.toolspec import Effect
from yagent.toolspec.builtin import builtin_by_name

RECORDED = "[recorded before the interruption; not run again]\n"


async def settle(
    services: ResumeServices, runner: Runner, surface: Surface, history: Sequence[Message]
) -> list[Message]:
    """`history` with a result for every open delegate call (see the module contract)."""
    answered = {m.tool_call_id for m in history if m.role == "tool"}
    out: list[Message] = []
    for message in history:
        out.append(message)
        for call in message.tool_calls if message.role == "assistant" else ():
            spec = surface.spec(call.name)
            if call.id in answered or spec is None or spec.effect is not Effect.DELEGATE:
                continue
            text = await _decide(services, runner, call)
            out.append(_store(services, runner, call, text))
    return out


async def _decide(services: ResumeServices, runner: Runner, call: ToolCall) -> str:
    request = _request(call)
    task = await _find(services, runner.session_id, call.id)
    if task is None:  # never posted: it never started
        return await runner.delegate(request)
    did = task.id.split("/", 1)[1]
    recorded = delegationview.from_board(task)
    if recorded is not None:
        return RECORDED + delegationview.format_for_director(recorded)
    decision = await services.durable.decide(runner.session_id, did)
    if decision.action is Action.CONTINUE or decision.run is None:
        try:
            declaration = runner.admit(did, request)
        except Refused as exc:
            return delegationview.format_for_director(
                _degraded(services, runner, did, call, [str(exc)])
            )
        try:
            outcome = await runner.run(
                did, request, declaration, resume=decision if decision.run else None
            )
        finally:
            runner.pool.claims.release(did)
        return delegationview.format_for_director(outcome)
    why = [f"its run concluded ({decision.describe()}) but its outcome was never recorded"]
    return delegationview.format_for_director(_degraded(services, runner, did, call, why))


def _request(call: ToolCall) -> Request:
    try:
        args = json.loads(call.arguments or "{}")
    except json.JSONDecodeError:
        args = {}
    args = args if isinstance(args, dict) else {}

    def words(key: str) -> tuple[str, ...]:
        value = args.get(key) or []
        return tuple(v for v in value if isinstance(v, str)) if isinstance(value, list) else ()

    agent, task = str(args.get("agent") or ""), str(args.get("task") or "")
    return Request(call.id, agent, task, words("write"), words("read"))


async def _find(services: ResumeServices, session_id: str, call_id: str) -> taskboard.Task | None:
    """The last delegation of this session posted for `call_id`."""
    prefix = board_id(session_id, "")
    found = None
    for task in (await services.board.snapshot()).tasks:
        if not task.id.startswith(prefix):
            continue
        try:
            posted = json.loads(task.payload)
        except json.JSONDecodeError:
            continue
        if isinstance(posted, dict) and posted.get("call_id") == call_id:
            found = task
    return found


def _degraded(
    services: ResumeServices, runner: Runner, did: str, call: ToolCall, why: list[str]
) -> Outcome:
    """A report of what the child did, from its records, and why nothing better could be given."""
    calls = services.store.tool_calls(runner.session_id, delegation_id=did)
    specs = builtin_by_name()
    written: list[str] = []
    lines = [f"degraded handoff for {did}: its work as recorded"]
    for record in calls:
        state = "no result" if record.ok is None else ("ok" if record.ok else "failed")
        lines.append(f"- {record.name} {record.arguments[:200]} → {state}")
        spec = specs.get(record.name)
        if spec is not None and spec.effect is Effect.WRITE and record.ok:
            try:
                written += spec.arg_paths_of(json.loads(record.arguments))
            except (json.JSONDecodeError, AttributeError):
                why.append(f"the arguments of call {record.call_id} could not be read")
    texts = [
        m.get("content")
        for m in services.store.messages(runner.session_id, delegation_id=did)
        if m.get("role") == "assistant" and m.get("content")
    ]
    lines.append("files written: " + (", ".join(sorted(set(written))) or "none recorded"))
    lines.append("last text: " + (str(texts[-1]) if texts else "none"))
    agent = _request(call).agent
    reason = "degraded handoff: " + "; ".join(why)
    receipt = delegate.Receipt.failed(agent, reason, untrusted.deliverable("\n".join(lines)))
    return Outcome.of(receipt, delegation_id=did, call_id=call.id, notes=tuple(why))


def _store(services: ResumeServices, runner: Runner, call: ToolCall, text: str) -> Message:
    """The call's result, stored as its tool message (the way `runtrack.settle` stores one)."""
    runner.session.log.flush()
    content = json.dumps(text, ensure_ascii=False)  # as the executor's result is serialised
    message = untrusted.tool_message(call.id, call.name, content)
    services.store.append_message(runner.session_id, message.to_dict(), agent=runner.caller)
    with contextlib.suppress(ToolCallNotFoundError):
        services.store.record_tool_result(
            runner.session_id,
            call.id,
            content=message.content,
            ok=True,
            kind=None,
            ended_at=time.time(),
        )
    return message
