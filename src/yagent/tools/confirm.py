"""The authorization loop: ask the person, wait for the matching answer.

Contract:
- A request carries a `request_id` (a uuid is generated when the caller has none); it is published
  as `user_help_needed` on the dispatcher's critical queue and waits for the answer with that id.
- Only `user_help_response` events are consumed; an answer whose id matches no pending request is
  logged as a warning and ignored (it never answers someone else's question).
- Cancellation of the waiting tool's scope, or the optional timeout, unblocks the wait: a timeout
  returns a refusal that says so; cancellation propagates.
"""

from __future__ import annotations

import enum
import logging
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import anyio

from yagent.messaging import USER_HELP_NEEDED, USER_HELP_RESPONSE, Dispatcher, Event

log = logging.getLogger("yagent.tools.confirm")


class Scope(enum.StrEnum):
    """How far an approval reaches."""

    ONCE = "once"
    TOOL = "tool"  # this tool, for the rest of the session
    SESSION = "session"  # skip all questions for the rest of the session
    PROJECT = "project"  # persisted in authorized_projects
    RULE = "rule"  # a shell command: don't ask again — an allow rule in the project's rules file


@dataclass(frozen=True, slots=True)
class Answer:
    request_id: str
    approved: bool
    text: str = ""
    scope: Scope = Scope.ONCE
    timed_out: bool = False
    asked: bool = True  # False: the UI had nobody to put the question to (it said why in text)


class _Pending:
    __slots__ = ("answer", "done")

    def __init__(self) -> None:
        self.done = anyio.Event()
        self.answer: Answer | None = None


class UserConfirm:
    def __init__(self, dispatcher: Dispatcher, *, timeout: float | None = None) -> None:
        self._dispatcher = dispatcher
        self._timeout = timeout
        self._pending: dict[str, _Pending] = {}
        self.ignored = 0

    def pending_ids(self) -> tuple[str, ...]:
        return tuple(self._pending)

    async def ask(
        self,
        kind: str,
        payload: Mapping[str, Any],
        *,
        request_id: str = "",
        delegation_id: str = "",
    ) -> Answer:
        """Publish a `user_help_needed` event and wait for its answer."""
        rid = request_id or uuid.uuid4().hex
        if rid in self._pending:
            raise ValueError(f"request id {rid!r} is already waiting for an answer")
        slot = _Pending()
        self._pending[rid] = slot
        try:
            body = {"request_id": rid, "kind": kind, **payload}
            self._dispatcher.send(Event(USER_HELP_NEEDED, body, delegation_id))
            if self._timeout is None:
                await slot.done.wait()
            else:
                with anyio.move_on_after(self._timeout):
                    await slot.done.wait()
            if slot.answer is None:
                return Answer(rid, False, f"no answer within {self._timeout:g}s", timed_out=True)
            return slot.answer
        finally:
            self._pending.pop(rid, None)

    def consume(self, event: Event) -> bool:
        """Deliver an answer; True when it matched a pending request."""
        if event.type != USER_HELP_RESPONSE:
            return False
        rid = str(event.payload.get("request_id", ""))
        slot = self._pending.get(rid)
        if slot is None or slot.done.is_set():
            self.ignored += 1
            log.warning("ignored user_help_response for unknown request id %r", rid)
            return False
        scope_value = event.payload.get("scope", Scope.ONCE.value)
        try:
            scope = Scope(scope_value)
        except ValueError:
            log.warning("unknown approval scope %r treated as once", scope_value)
            scope = Scope.ONCE
        slot.answer = Answer(
            rid,
            bool(event.payload.get("approved", False)),
            str(event.payload.get("text", "")),
            scope,
            asked=bool(event.payload.get("asked", True)),
        )
        slot.done.set()
        return True


def response(
    request_id: str,
    *,
    approved: bool,
    text: str = "",
    scope: Scope = Scope.ONCE,
    asked: bool = True,
) -> Event:
    """The event a UI sends back (one constructor, so both sides agree on the shape);
    `asked=False` when the UI had nobody to ask (`text` says why)."""
    payload = {"request_id": request_id, "approved": approved, "text": text, "scope": scope.value}
    if not asked:
        payload["asked"] = False
    return Event(USER_HELP_RESPONSE, payload)
