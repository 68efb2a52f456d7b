"""A session's stored messages as history for the model: valid for a strict provider.

Contract (`from_store`): the stored rows in order, with
- one result per tool call id — the last one stored wins (a settled "the process died" result
  written while the call was in fact still running is replaced by the real one that came after),
  placed right after the assistant turn that made the call;
- an assistant turn whose tool calls were all made by an earlier stored turn left out (a second
  runner's repeat), and so never sent twice;
- a result whose call no stored turn made kept where it is (it was already orphaned; this does
  not invent or hide one).
Everything else is kept as stored, in order; every message passes `untrusted.restored` (the
model reads stored tool results and its own earlier replies neutralised).
Leaves to the store: what was written, and when.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from yagent.agents import untrusted
from yagent.llm import Message
from yagent.memory import message_body


def from_store(rows: Iterable[Mapping[str, Any]]) -> list[Message]:
    messages = untrusted.restored(message_body(row) for row in rows)
    made = {c.id for m in messages if m.role == "assistant" for c in m.tool_calls}
    last: dict[str, Message] = {}
    for message in messages:
        if message.role == "tool" and message.tool_call_id in made:
            last[message.tool_call_id] = message
    out: list[Message] = []
    seen: set[str] = set()
    for message in messages:
        if message.role == "tool":
            if message.tool_call_id not in made:
                out.append(message)
            continue
        ids = [c.id for c in message.tool_calls]
        if message.role == "assistant" and ids and seen.issuperset(ids):
            continue  # a repeat of a turn already in the history
        seen.update(ids)
        out.append(message)
        out.extend(last[i] for i in ids if i in last)
    return out
