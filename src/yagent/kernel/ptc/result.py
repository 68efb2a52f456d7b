"""ptc results: only small, merged results leave a program — and every cut says so.

Contract:
- `Result` is a finished program: its final value as JSON text capped at `Budget.result`
  characters (`truncated` and `value_size` say when and by how much it was cut; `value` is the
  parsed value only when nothing was cut), or the error it ended with and that error's kind
  (`runtime` when the program did not say, i.e. its own code threw); the
  console lines kept under `Budget.logs` (`logs_dropped` counts the rest); one `CallRecord` per
  host call in order; what was spent (`Usage`); host calls made but never awaited (`unawaited`,
  they never ran); and, for the subprocess form, the capability the worker declared.
- `render()` is the one model-facing text of a result: the value (or error), then the console
  output, then a line for every cut or drop.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from yagent.kernel.judge import toolfail
from yagent.kernel.judge.invoke import Call


@dataclass(frozen=True, slots=True)
class CallRecord:
    """One host call as it happened (for the trajectory: children of the program call)."""

    call_id: str
    tool: str
    ok: bool
    kind: toolfail.Kind | None = None
    stage: str = ""
    executed: bool = False
    bytes: int = 0


Observer = Callable[[Call, CallRecord], None]
"""Told of each host call as it completes (the host's trajectory)."""


@dataclass(frozen=True, slots=True)
class Usage:
    calls: int = 0
    bytes: int = 0
    elapsed: float = 0.0


class LogBook:
    """Console lines kept under a character cap; everything past it is counted, not kept."""

    __slots__ = ("_cap", "_chars", "dropped", "lines")

    def __init__(self, cap: int) -> None:
        self._cap = cap
        self._chars = 0
        self.lines: list[str] = []
        self.dropped = 0

    def add(self, lines: Iterable[Any], dropped: int = 0) -> None:
        self.dropped += max(0, int(dropped))
        for line in lines:
            text = line if isinstance(line, str) else json.dumps(line)
            if self._chars + len(text) > self._cap:
                self.dropped += 1
                continue
            self._chars += len(text)
            self.lines.append(text)


@dataclass(frozen=True, slots=True)
class Final:
    """How the program itself ended (before any host-side capping)."""

    ok: bool
    value_json: str = "null"  # already cut to the result cap by the engine
    value_size: int = 4
    error: str = ""
    kind: str | None = None
    unawaited: int = 0


@dataclass(frozen=True, slots=True)
class Result:
    ok: bool
    output: str
    value: Any = None
    truncated: bool = False
    value_size: int = 0
    error: str = ""
    kind: toolfail.Kind | None = None
    logs: tuple[str, ...] = ()
    logs_dropped: int = 0
    calls: tuple[CallRecord, ...] = ()
    usage: Usage = field(default_factory=Usage)
    unawaited: int = 0
    capability: Mapping[str, str] = field(default_factory=dict)

    def render(self) -> str:
        """The model-facing text: value or error, console output, then every cut."""
        parts = [self.output if self.ok else f"error ({self.kind or 'program'}): {self.error}"]
        if self.logs:
            parts.append("console:\n" + "\n".join(self.logs))
        if self.truncated:
            parts.append(
                f"[result truncated: {len(self.output)} of {self.value_size} characters shown; "
                "return a smaller, merged value]"
            )
        if self.logs_dropped:
            parts.append(f"[console: {self.logs_dropped} more lines dropped]")
        if self.unawaited:
            parts.append(f"[{self.unawaited} host calls were never awaited and did not run]")
        return "\n".join(parts)


def finish(
    final: Final,
    logs: LogBook,
    calls: Iterable[CallRecord],
    usage: Usage,
    *,
    cap: int,
    capability: Mapping[str, str] | None = None,
) -> Result:
    """A `Result` from how the program ended; the value capped at `cap` characters."""
    common: dict[str, Any] = {
        "logs": tuple(logs.lines),
        "logs_dropped": logs.dropped,
        "calls": tuple(calls),
        "usage": usage,
        "unawaited": final.unawaited,
        "capability": dict(capability or {}),
    }
    if not final.ok:
        kind = toolfail.parse_kind(final.kind) if final.kind else toolfail.Kind.RUNTIME
        return Result(False, "", error=final.error, kind=kind, **common)
    text = final.value_json[:cap]
    truncated = final.value_size > len(text)
    value = None if truncated else json.loads(text)
    return Result(True, text, value, truncated, final.value_size, **common)
