"""What the model reads that nobody in yagent wrote: the one way it is made harmless.

Contract:
- `for_model(text)` is the one function every untrusted text passes on its way to the model:
  `reminder.neutralize` under the band kinds registered so far — a forged system band (any case,
  fullwidth or zero-width look-alikes, `&lt;` escapes) or a chat-template control token becomes a
  visible `[neutralized …]` note, and Unicode tag characters (invisible, read by models as
  ASCII: a sentence only the model sees) are written out (`\\U000e0069`); everything else comes
  back byte for byte.
- `tool_message(...)` is the only constructor of a tool-result message (a gate test scans the
  source for any other): whatever a tool returned — files, shell output, search hits, web and
  browser text, MCP and program results, spill pages read back, hook and refusal messages, a
  result recorded before a crash — passes `for_model` there, so a new tool cannot forget it.
- `restored(bodies)` rebuilds a history read back from a store (resume, a continued session):
  tool results go through `tool_message` again and the model's own earlier replies through
  `for_model` (a model that was talked into echoing a control token does not replay it); the
  messages the person and yagent placed (role `user`) are kept as written — a band's trust comes
  from where it was placed, and bands of an earlier process read as data to `reminder.unwrap`.
- `deliverable(text)`: a sub-agent's deliverable or report text on its way to another agent.
Refuses nothing: every text has a neutral form. Leaves to the host: calling `restored` on every
history it reads back (the gate test holds it to that).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from yagent.kernel.context import reminder
from yagent.llm import Image, Message


def for_model(text: str) -> str:
    """`text` as the model may read it (see the module contract)."""
    return reminder.neutralize(text)


def tool_message(call_id: str, name: str, content: str, images: tuple[Image, ...] = ()) -> Message:
    """The message carrying one tool result to the model, its content neutralised (images are
    pixels, not text: they travel as they are, for engines that accept them)."""
    return Message("tool", for_model(content), tool_call_id=call_id, name=name, images=images)


def deliverable(text: str) -> str:
    """A sub-agent's deliverable (or report) on its way to another agent."""
    return for_model(text)


def restored(bodies: Iterable[Mapping[str, Any]]) -> list[Message]:
    """Stored message bodies as a history the model may read again."""
    out: list[Message] = []
    for body in bodies:
        message = Message.from_dict(body)
        if message.role == "tool":
            message = tool_message(
                message.tool_call_id, message.name, message.content, message.images
            )
        elif message.role == "assistant" and message.content:
            message = replace(message, content=for_model(message.content))
        out.append(message)
    return out
