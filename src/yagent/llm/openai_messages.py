"""OpenAI chat messages on the wire, and a request body whose messages are each encoded once.

A chat request carries the whole conversation, and an agent asks once per step: encoding every
message into the body again at every step made step k cost O(k) in Python — the wire dicts built
and JSON-encoded anew. `BodyEncoder` keeps each message's encoded JSON while the conversation only
grows, so a step encodes its new messages; what is left per request is joining the encoded texts
(the bytes that go on the wire).

Contract:
- `wire_messages(request)`: the system prompt first (when set), then each message in OpenAI's shape
  (`wire_message`); a tool result's images, which tool messages cannot carry, follow the run of
  tool messages as one user message of labelled `image_url` data URLs.
- `BodyEncoder.encode(request, fields)` returns exactly the bytes httpx sends for
  `json={"model": …, "messages": wire_messages(request), **fields}` (compact separators, UTF-8
  unescaped, NaN refused — tested byte for byte over appends, rewrites, images and system
  changes). `fields` follow the messages in their order.
- A request whose messages are a `history.Messages` view extending one of the last
  `CONVERSATIONS` views it encoded (each agent of a run asks with its own) encodes only the
  messages after that view. Another view (a rewritten history, a new run) is encoded whole and
  remembered in place of the least recently used one; messages that are not a view (a tuple)
  are encoded whole every time (`llm.conversations`). It keeps the views it remembers: up to
  `CONVERSATIONS` histories stay in memory as long as the encoder does.
Leaves to the engine: the other fields' values, the request itself.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from yagent.llm.conversations import CONVERSATIONS, Conversations
from yagent.llm.conversations import to_json as _encode
from yagent.llm.types import Message, Request

__all__ = ["CONVERSATIONS", "BodyEncoder", "image_parts", "wire_message", "wire_messages"]


def wire_message(message: Message) -> dict[str, Any]:
    """One of our messages as an OpenAI chat message."""
    if message.role == "tool":
        return {"role": "tool", "tool_call_id": message.tool_call_id, "content": message.content}
    if message.role == "assistant" and message.tool_calls:
        return {
            "role": "assistant",
            "content": message.content or None,
            "tool_calls": [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments or "{}"},
                }
                for call in message.tool_calls
            ],
        }
    return {"role": message.role, "content": message.content}


def image_parts(message: Message) -> list[dict[str, Any]]:
    """A tool message's images as labelled `image_url` parts of a user message."""
    parts: list[dict[str, Any]] = []
    for index, image in enumerate(message.images, 1):
        label = f"image {index} returned by tool call {message.tool_call_id} ({message.name})"
        url = f"data:{image.mime};base64,{image.data}"
        parts += [{"type": "text", "text": label}, {"type": "image_url", "image_url": {"url": url}}]
    return parts


def wire_messages(request: Request) -> list[dict[str, Any]]:
    """Chat messages; images of tool results follow the run of tool messages as one user
    message of image parts (tool messages carry text only), each image named by its call."""
    out: list[dict[str, Any]] = (
        [{"role": "system", "content": request.system}] if request.system else []
    )
    images: list[dict[str, Any]] = []
    for message in request.messages:
        if message.role != "tool" and images:
            out.append({"role": "user", "content": images})
            images = []
        out.append(wire_message(message))
        images += image_parts(message)
    if images:
        out.append({"role": "user", "content": images})
    return out


@dataclass
class _Encoded:
    """One conversation as encoded so far: the messages' JSON texts and the images still
    waiting for the run of tool messages to end."""

    texts: list[str] = field(default_factory=list)
    images: list[dict[str, Any]] = field(default_factory=list)

    def add(self, messages: Sequence[Message]) -> None:
        for message in messages:
            if message.role != "tool" and self.images:
                self.texts.append(_encode({"role": "user", "content": self.images}))
                self.images = []
            self.texts.append(_encode(wire_message(message)))
            self.images += image_parts(message)

    def finished(self) -> list[str]:
        if not self.images:
            return self.texts
        return [*self.texts, _encode({"role": "user", "content": self.images})]


class BodyEncoder:
    """Request bodies whose messages are encoded once per conversation (module contract)."""

    def __init__(self) -> None:
        self._conversations: Conversations[_Encoded] = Conversations(_Encoded)
        self._system: tuple[str, str] = ("", "")

    def encode(self, request: Request, fields: Mapping[str, Any]) -> bytes:
        texts = self._messages(request.messages)
        if request.system:
            if self._system[0] != request.system:
                system = {"role": "system", "content": request.system}
                self._system = (request.system, _encode(system))
            texts = [self._system[1], *texts]
        model = _encode(fields["model"])
        rest = _encode({k: v for k, v in fields.items() if k != "model"})
        tail = "}" if rest == "{}" else "," + rest[1:]
        return f'{{"model":{model},"messages":[{",".join(texts)}]{tail}'.encode()

    def _messages(self, messages: Sequence[Message]) -> list[str]:
        return self._conversations.advance(messages, _Encoded.add).finished()
