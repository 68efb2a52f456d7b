"""Recorded sessions and the ReplayEngine that replays their model side.

Contract:
- A `Recording` holds, per agent identity, the ordered steps of a session: each step is the
  assistant turn the model produced (text, tool calls, usage) and the tool results that followed it
  (`{call_id: content}`). It round-trips through JSON (`save` / `load`); a malformed file is a
  `RecordingFormatError` naming where, never a half-loaded recording.
- `ReplayEngine` answers each request with the next recorded turn of the requesting identity
  (recognised from the system prompt exactly as `ScriptedEngine` does — `yagent.llm.identity`).
  Tools run for real; on each request the engine compares the tool-result messages answering the
  identity's previous recorded turn with the recorded results. Every mismatch (a different content,
  a missing result) is appended to `divergences`; replay goes on — divergences are reported, not
  fatal. `normalise` (applied to both sides) lets a host ignore volatile text such as temp paths.
- Results of a turn that no later request answered were never compared; `unverified()` lists them,
  so a report can say so instead of implying they matched.
- A request past the end of an identity's recording is an `EngineError` saying so. The engine
  checks for cancellation before answering.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from yagent.kernel.judge import toolfail
from yagent.llm.identity import identify
from yagent.llm.types import (
    AssistantTurn,
    EngineError,
    Message,
    Request,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolCallStarted,
    TurnDone,
    Usage,
)

FORMAT_VERSION = 1


class ReplayError(Exception):
    """Base of the replay errors."""


class RecordingFormatError(ReplayError):
    """A recording file or mapping does not have the recording shape."""


@dataclass(frozen=True, slots=True)
class RecordedStep:
    turn: AssistantTurn
    results: Mapping[str, str] = field(default_factory=dict)  # call_id -> tool result content

    def to_dict(self) -> dict[str, Any]:
        turn = self.turn
        return {
            "turn": {
                "text": turn.text,
                "tool_calls": [
                    {"id": c.id, "name": c.name, "arguments": c.arguments} for c in turn.tool_calls
                ],
                "usage": turn.usage.to_dict(),
                "stop_reason": turn.stop_reason,
                "model": turn.model,
            },
            "results": dict(self.results),
        }

    @classmethod
    def from_dict(cls, data: object, where: str) -> RecordedStep:
        step = _mapping(data, where)
        raw = _mapping(step.get("turn"), f"{where}.turn")
        calls = tuple(
            _call(c, f"{where}.turn.tool_calls[{i}]")
            for i, c in enumerate(_list(raw.get("tool_calls", []), f"{where}.turn.tool_calls"))
        )
        usage = _mapping(raw.get("usage", {}), f"{where}.turn.usage")
        try:
            counts = Usage(**{k: int(v) for k, v in usage.items()})
        except (TypeError, ValueError) as exc:
            raise RecordingFormatError(f"{where}.turn.usage: {exc}") from exc
        turn = AssistantTurn(
            _text(raw.get("text", ""), f"{where}.turn.text"),
            calls,
            counts,
            _text(raw.get("stop_reason", ""), f"{where}.turn.stop_reason"),
            _text(raw.get("model", ""), f"{where}.turn.model"),
        )
        results = _mapping(step.get("results", {}), f"{where}.results")
        return cls(turn, {str(k): _text(v, f"{where}.results[{k!r}]") for k, v in results.items()})


def _call(data: object, where: str) -> ToolCall:
    call = _mapping(data, where)
    return ToolCall(
        _text(call.get("id"), f"{where}.id"),
        _text(call.get("name"), f"{where}.name"),
        _text(call.get("arguments", "{}"), f"{where}.arguments"),
    )


def _mapping(value: object, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise RecordingFormatError(f"{where}: expected an object, got {type(value).__name__}")
    return value


def _list(value: object, where: str) -> Sequence[Any]:
    if not isinstance(value, list):
        raise RecordingFormatError(f"{where}: expected a list, got {type(value).__name__}")
    return value


def _text(value: object, where: str) -> str:
    if not isinstance(value, str):
        raise RecordingFormatError(f"{where}: expected a string, got {type(value).__name__}")
    return value


@dataclass
class Recording:
    agents: dict[str, list[RecordedStep]] = field(default_factory=dict)

    def add(
        self, identity: str, turn: AssistantTurn, results: Mapping[str, str] | None = None
    ) -> None:
        self.agents.setdefault(identity, []).append(RecordedStep(turn, dict(results or {})))

    def add_transcript(self, identity: str, messages: Sequence[Message]) -> None:
        """Steps from a message log: each assistant message with the tool results after it."""
        for message in messages:
            if message.role == "assistant":
                self.add(identity, message_turn(message))
            elif message.role == "tool" and self.agents.get(identity):
                last = self.agents[identity][-1]
                results = {**last.results, message.tool_call_id: message.content}
                self.agents[identity][-1] = RecordedStep(last.turn, results)

    def steps(self, identity: str) -> tuple[RecordedStep, ...]:
        return tuple(self.agents.get(identity, ()))

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": FORMAT_VERSION,
            "agents": {k: [s.to_dict() for s in v] for k, v in self.agents.items()},
        }

    @classmethod
    def from_dict(cls, data: object) -> Recording:
        top = _mapping(data, "recording")
        if top.get("version") != FORMAT_VERSION:
            raise RecordingFormatError(
                f"recording.version: expected {FORMAT_VERSION}, got {top.get('version')!r}"
            )
        agents = _mapping(top.get("agents"), "recording.agents")
        return cls(
            {
                str(ident): [
                    RecordedStep.from_dict(s, f"recording.agents[{ident!r}][{i}]")
                    for i, s in enumerate(_list(steps, f"recording.agents[{ident!r}]"))
                ]
                for ident, steps in agents.items()
            }
        )

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_dict(), indent=2, ensure_ascii=False) + "\n")

    @classmethod
    def load(cls, path: str | Path) -> Recording:
        try:
            data = json.loads(Path(path).read_text())
        except ValueError as exc:
            raise RecordingFormatError(f"{path}: not JSON: {exc}") from exc
        try:
            return cls.from_dict(data)
        except RecordingFormatError as exc:  # which file it is, as for the JSON error above
            raise RecordingFormatError(f"{path}: {exc}") from exc


def message_turn(message: Message) -> AssistantTurn:
    return AssistantTurn(message.content, message.tool_calls)


@dataclass(frozen=True, slots=True)
class Divergence:
    identity: str
    step: int  # 0-based index of the recorded step whose tool results differ
    call_id: str
    tool: str
    expected: str | None  # None: the recording has no result for this call
    actual: str | None  # None: the request carried no result for this call


def _results_in(request: Request) -> dict[str, str]:
    """tool_call_id -> content of the tool messages in the request (the last one wins)."""
    return {m.tool_call_id: m.content for m in request.messages if m.role == "tool"}


class ReplayEngine:
    """Replays the model side of a `Recording`, per agent identity."""

    def __init__(
        self,
        recording: Recording,
        *,
        markers: Mapping[str, str] | None = None,
        normalise: Callable[[str], str] | None = None,
        model_name: str = "replay",
    ) -> None:
        self.recording = recording
        self.markers = dict(markers or {})
        self.normalise = normalise or (lambda text: text)
        self.model_name = model_name
        self.divergences: list[Divergence] = []
        self.requests: list[tuple[str, Request]] = []
        self._cursor: dict[str, int] = {}

    @property
    def model(self) -> str:
        return self.model_name

    def identity(self, request: Request) -> str:
        return identify(request.system, self.recording.agents, self.markers, who="replay engine")

    def remaining(self, identity: str) -> int:
        return len(self.recording.steps(identity)) - self._cursor.get(identity, 0)

    def unverified(self) -> list[tuple[str, int]]:
        """(identity, step) of replayed turns with tool calls whose results no request answered."""
        out: list[tuple[str, int]] = []
        for ident, cursor in sorted(self._cursor.items()):
            steps = self.recording.steps(ident)
            if 0 < cursor <= len(steps) and steps[cursor - 1].turn.tool_calls:
                out.append((ident, cursor - 1))
        return out

    def _compare(self, ident: str, index: int, request: Request) -> None:
        step = self.recording.steps(ident)[index]
        actual = _results_in(request)
        for call in step.turn.tool_calls:
            want = step.results.get(call.id)
            got = actual.get(call.id)
            want_n = None if want is None else self.normalise(want)
            got_n = None if got is None else self.normalise(got)
            if want_n != got_n:
                self.divergences.append(Divergence(ident, index, call.id, call.name, want, got))

    async def stream(self, request: Request) -> AsyncIterator[StreamEvent]:
        await anyio.lowlevel.checkpoint()  # cancellation is honoured before answering
        ident = self.identity(request)
        steps = self.recording.steps(ident)
        index = self._cursor.get(ident, 0)
        if 0 < index <= len(steps):
            self._compare(ident, index - 1, request)
        if index >= len(steps):
            self._cursor[ident] = len(steps) + 1  # its last results are compared now
            raise EngineError(
                toolfail.Kind.INTERNAL,
                f"replay engine: the run went past the recording for {ident!r} "
                f"({len(steps)} recorded steps, this is request {index + 1})",
            )
        self._cursor[ident] = index + 1
        self.requests.append((ident, request))
        turn = steps[index].turn
        for i in range(0, len(turn.text), 16):
            yield TextDelta(turn.text[i : i + 16])
        for i, call in enumerate(turn.tool_calls):
            yield ToolCallStarted(i, call.id, call.name)
        model = turn.model or self.model_name
        yield TurnDone(
            AssistantTurn(turn.text, turn.tool_calls, turn.usage, turn.stop_reason, model)
        )
