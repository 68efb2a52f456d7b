"""Anthropic messages on the wire, and a request body whose messages are each encoded once.

A messages request carries the whole conversation, and an agent asks once per step: building
every message's blocks again at every step (and the SDK copying and JSON-encoding them) made step
k cost O(k) in Python. `BodyEncoder` keeps each turn's encoded JSON while the conversation only
grows, so a step encodes its new messages; what is left per request is marking the newest block
for the prompt cache and joining the encoded texts (the bytes that go on the wire).

Contract:
- `wire_messages(messages, cache_conversation=…)`: our messages regrouped into Anthropic's
  alternating turns. An assistant message becomes text + `tool_use` blocks (arguments parsed from
  their JSON text, repaired if needed; a non-object becomes `{}`); consecutive tool results (and
  any user text after them) merge into ONE user message whose `tool_result` blocks come first (a
  result with images holds its text and base64 `image` blocks); `system` messages inside the
  conversation become user text; assistant messages with no content are dropped. With
  `cache_conversation`, the last block of the last turn carries `cache_control: ephemeral`.
- `tool_defs(tools)` / `system_blocks(system)`: tools as `{"name", "description",
  "input_schema"}` and the system prompt as one text block, the last tool and the system block
  marked for the prompt cache.
- `BodyEncoder(cache_conversation=…).encode(request, model=…, max_tokens=…)` returns exactly the
  bytes the `anthropic` SDK's `messages.create(stream=True, …)` sends for `max_tokens`, `model`,
  `messages=wire_messages(…)`, `system=system_blocks(…)` (when set) and `tools=tool_defs(…)` (when
  any) — tested byte for byte against the SDK over appends, rewrites, images, tool calls and
  results, system changes and interleaved conversations.
- A request whose messages are a `history.Messages` view extending one of the last
  `conversations.CONVERSATIONS` views it encoded encodes only the messages after that view; the
  cache marker is put on a copy of the newest block's text alone. Anything else is encoded whole
  (`llm.conversations`). Per request the encoder still joins every turn's text and re-joins the
  blocks of the last turn, and encodes the tool definitions.
Leaves to the engine: sending the body.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import json_repair

from yagent.llm.conversations import Conversations, to_json
from yagent.llm.types import Message, Request

EPHEMERAL: Mapping[str, str] = {"type": "ephemeral"}
_MARK = (',"cache_control":' + to_json(EPHEMERAL) + "}").encode()  # closes a block, marked


def tool_defs(tools: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for tool in tools:
        item: dict[str, Any] = {"name": tool["name"]}
        if tool.get("description"):
            item["description"] = tool["description"]
        item["input_schema"] = tool.get("parameters") or {"type": "object", "properties": {}}
        out.append(item)
    if out:
        out[-1]["cache_control"] = dict(EPHEMERAL)
    return out


def system_blocks(system: str) -> list[dict[str, Any]]:
    if not system:
        return []
    return [{"type": "text", "text": system, "cache_control": dict(EPHEMERAL)}]


def _arguments(text: str) -> dict[str, Any]:
    if not text.strip():
        return {}
    try:
        value = json.loads(text)
    except ValueError:
        value = json_repair.loads(text)
    return value if isinstance(value, dict) else {}


def _assistant_blocks(message: Message) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    if message.content:
        blocks.append({"type": "text", "text": message.content})
    blocks.extend(
        {"type": "tool_use", "id": c.id, "name": c.name, "input": _arguments(c.arguments)}
        for c in message.tool_calls
    )
    return blocks


def _result_block(message: Message) -> dict[str, Any]:
    content: Any = message.content
    if message.images:  # a tool result may hold image blocks next to its text
        content = [{"type": "text", "text": content}] + [
            {"type": "image", "source": {"type": "base64", "media_type": i.mime, "data": i.data}}
            for i in message.images
        ]
    return {"type": "tool_result", "tool_use_id": message.tool_call_id, "content": content}


def wire_messages(messages: Sequence[Message], *, cache_conversation: bool) -> list[dict[str, Any]]:
    """Our messages as Anthropic turns: user-side runs merged, tool results first."""
    turns: list[dict[str, Any]] = []
    results: list[dict[str, Any]] = []
    texts: list[dict[str, Any]] = []

    def flush_user() -> None:
        if results or texts:
            turns.append({"role": "user", "content": [*results, *texts]})
            results.clear()
            texts.clear()

    for message in messages:
        if message.role == "assistant":
            blocks = _assistant_blocks(message)
            if blocks:
                flush_user()
                turns.append({"role": "assistant", "content": blocks})
        elif message.role == "tool":
            results.append(_result_block(message))
        elif message.content:
            texts.append({"type": "text", "text": message.content})
    flush_user()
    if cache_conversation and turns:
        turns[-1]["content"][-1]["cache_control"] = dict(EPHEMERAL)
    return turns


def _turn(role: bytes, blocks: Sequence[bytes], *, mark: bool) -> bytes:
    """A turn's JSON from its blocks' JSON; `mark` puts the cache marker on the last block (a
    copy of that block's text: the others are joined as they are)."""
    if mark:
        blocks = [*blocks[:-1], blocks[-1][:-1] + _MARK]
    return b'{"role":"' + role + b'","content":[' + b",".join(blocks) + b"]}"


def _json(value: Any) -> bytes:
    return to_json(value).encode()


@dataclass
class _Turns:
    """One conversation as encoded so far (UTF-8 JSON): the closed turns, the blocks of the
    newest assistant turn (marked when it is the last), and the user-side blocks still waiting
    for the next assistant turn (tool results first, then texts)."""

    closed: list[bytes] = field(default_factory=list)
    assistant: list[bytes] = field(default_factory=list)
    results: list[bytes] = field(default_factory=list)
    texts: list[bytes] = field(default_factory=list)

    def add(self, messages: Sequence[Message]) -> None:
        for message in messages:
            if message.role == "assistant":
                blocks = [_json(block) for block in _assistant_blocks(message)]
                if blocks:
                    if self.results or self.texts:
                        self.closed.append(_turn(b"user", self.results + self.texts, mark=False))
                        self.results, self.texts = [], []
                    self.closed.append(_turn(b"assistant", blocks, mark=False))
                    self.assistant = blocks
            elif message.role == "tool":
                self.results.append(_json(_result_block(message)))
            elif message.content:
                self.texts.append(_json({"type": "text", "text": message.content}))

    def turns(self, *, mark: bool) -> list[bytes]:
        """Every turn's JSON, the last one marked when `mark`."""
        if self.results or self.texts:
            return [*self.closed, _turn(b"user", self.results + self.texts, mark=mark)]
        if mark and self.closed:
            return [*self.closed[:-1], _turn(b"assistant", self.assistant, mark=True)]
        return self.closed


class BodyEncoder:
    """Request bodies whose messages are encoded once per conversation (module contract)."""

    def __init__(self, *, cache_conversation: bool) -> None:
        self._mark = cache_conversation
        self._conversations: Conversations[_Turns] = Conversations(_Turns)
        self._system: tuple[str, bytes] = ("", b"")

    def encode(self, request: Request, *, model: str, max_tokens: int) -> bytes:
        turns = self._conversations.advance(request.messages, _Turns.add).turns(mark=self._mark)
        head = b'{"max_tokens":' + _json(max_tokens) + b',"messages":['
        tail = [b'],"model":', _json(model), b',"stream":true']
        if request.system:
            if self._system[0] != request.system:
                self._system = (request.system, _json(system_blocks(request.system)))
            tail += [b',"system":', self._system[1]]
        if request.tools:
            tail += [b',"tools":', _json(tool_defs(request.tools))]
        tail.append(b"}")
        if not turns:
            return head + b"".join(tail)
        # One copy of the conversation's bytes: the head and tail ride on the first and last turn.
        if len(turns) == 1:
            return head + turns[0] + b"".join(tail)
        return b",".join([head + turns[0], *turns[1:-1], turns[-1] + b"".join(tail)])
