"""ptc session: the host side of a run — every host call a program makes is answered here.

Contract:
- `HostSession.answer(requests)` takes a batch of the program's calls (`{"id", "ident", "form",
  "args"}`, `args` being the JSON text the program passed) and answers each, in the order the
  program made them, one after another (approvals are asked one at a time; order is deterministic).
- Per call: charge the call budget (over it ⇒ `Stop(calls)`, the call is not made); resolve the
  binding and form (an unknown identifier is a `forbidden` answer, arguments that do not fit the
  form an `invalid_args` answer — neither executes anything); dispatch through the dispatcher's
  chain; require the reply's judgement unless unmanaged execution was allowed (`Stop(unmanaged)`);
  charge the answer's bytes (over the byte budget ⇒ `Stop(bytes)`, the answer is not delivered).
- A refused or failed call is answered as a rejection carrying reason, kind, retryability, the
  stage that spoke and whether the chain denied it — the program sees exactly what a direct call
  would have been told. A request that is not of the protocol's shape is `Stop(protocol)`.
- Each call is recorded (`records`) and reported to the optional observer as it completes.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from yagent.kernel.judge import toolfail
from yagent.kernel.judge.invoke import Call
from yagent.kernel.judge.tooldisclose import CallFormError
from yagent.kernel.ptc.bindings import OBJECT, POSITIONAL, Bindings
from yagent.kernel.ptc.budget import Budget, Meter
from yagent.kernel.ptc.dispatch import Dispatcher, Reply
from yagent.kernel.ptc.errors import Cause, Stop
from yagent.kernel.ptc.result import CallRecord, Observer


@dataclass(frozen=True, slots=True)
class Scope:
    """How host calls are named for the ring and the trajectory: children of `parent_id`."""

    parent_id: str = "ptc"
    caller: str = ""
    depth: int = 0


@dataclass(frozen=True, slots=True)
class Request:
    id: int
    ident: str
    form: str
    args: Any


def parse_request(raw: Any) -> Request:
    """A request of the protocol's shape, or `Stop(protocol)`."""
    if not isinstance(raw, dict):
        raise Stop(Cause.PROTOCOL, f"a host call request is not an object: {raw!r:.80}")
    rid, ident, form, text = raw.get("id"), raw.get("ident"), raw.get("form"), raw.get("args")
    if (
        not isinstance(rid, int)
        or isinstance(rid, bool)
        or not isinstance(ident, str)
        or form not in (OBJECT, POSITIONAL)
        or not isinstance(text, str)
    ):
        raise Stop(Cause.PROTOCOL, f"malformed host call request: {raw!r:.120}")
    try:
        args = json.loads(text)
    except ValueError as exc:
        raise Stop(Cause.PROTOCOL, f"host call arguments are not JSON: {exc}") from exc
    return Request(rid, ident, form, args)


class HostSession:
    __slots__ = (
        "_allow_unmanaged",
        "_observer",
        "_scope",
        "bindings",
        "dispatcher",
        "meter",
        "records",
    )

    def __init__(
        self,
        bindings: Bindings,
        dispatcher: Dispatcher | None,
        budget: Budget,
        *,
        scope: Scope | None = None,
        allow_unmanaged: bool = False,
        observer: Observer | None = None,
    ) -> None:
        self.bindings = bindings
        self.dispatcher = dispatcher
        self.meter = Meter(budget)
        self.records: list[CallRecord] = []
        self._scope = scope or Scope()
        self._allow_unmanaged = allow_unmanaged
        self._observer = observer

    async def answer(self, requests: Sequence[Any]) -> list[dict[str, Any]]:
        parsed = [parse_request(raw) for raw in requests]
        return [await self._one(request) for request in parsed]

    async def _one(self, request: Request) -> dict[str, Any]:
        number = self.meter.charge_call()
        scope = self._scope
        call_id = f"{scope.parent_id}#{number}"
        try:
            tool, args = self.bindings.resolve(request.ident, request.form, request.args)
        except (toolfail.ToolFailure, CallFormError) as exc:
            kind = toolfail.classify(exc)
            reply = Reply(False, None, str(exc), kind)
            call = Call(request.ident, {}, call_id=call_id, caller=scope.caller)
            return self._deliver(request, call, reply)
        call = Call(
            tool,
            args,
            call_id=call_id,
            caller=scope.caller,
            depth=scope.depth + 1,
            meta={"ptc_parent": scope.parent_id},
        )
        reply = await self._dispatch(call)
        if not reply.judged and not self._allow_unmanaged:
            raise Stop(
                Cause.UNMANAGED,
                f"host call {call_id} ({tool}) came back without a judgement: "
                "no stage of a chain judged it",
            )
        return self._deliver(request, call, reply)

    async def _dispatch(self, call: Call) -> Reply:
        if self.dispatcher is None:
            return Reply(False, None, "no dispatcher is bound", toolfail.Kind.UNMANAGED)
        return await self.dispatcher.dispatch(call)

    def _deliver(self, request: Request, call: Call, reply: Reply) -> dict[str, Any]:
        answer = _answer(request, call.tool, reply)
        try:
            text = json.dumps(answer, ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError) as exc:
            error = f"{call.tool} returned a value that is not JSON ({exc})"
            reply = Reply(False, None, error, toolfail.Kind.INTERNAL, "", True, reply.judgement)
            answer = _answer(request, call.tool, reply)
            text = json.dumps(answer, ensure_ascii=False)
        size = len(text.encode())
        self.meter.charge_bytes(size)
        record = CallRecord(
            call.call_id, call.tool, reply.ok, reply.kind, reply.stage, reply.executed, size
        )
        self.records.append(record)
        if self._observer is not None:
            self._observer(call, record)
        return answer


def _answer(request: Request, tool: str, reply: Reply) -> dict[str, Any]:
    if reply.ok:
        return {"id": request.id, "ok": True, "value": reply.value}
    kind = reply.kind or toolfail.Kind.UNKNOWN
    return {
        "id": request.id,
        "ok": False,
        "tool": tool,
        "error": reply.error,
        "kind": kind.value,
        "retryable": toolfail.retryable(kind),
        "stage": reply.stage,
        "denied": reply.denied,
    }
