"""ptc wire: the JSON-lines protocol between the parent and a subprocess worker.

One JSON object per line, `op` naming it. Parent → worker: `init` (the budget), `run` (program,
identifiers), `answers` (replies to a batch of host calls). Worker → parent: `hello` (pid, V8
version, heap limit), `calls` (a batch of host call requests plus the console lines since the
last message), `done` (the settled state: value or error), `abort` (a stop the worker saw itself:
heap, engine or protocol). A line longer than `MAX_LINE`, a line that is not a JSON object, or an
unexpected `op` is a protocol error (`Stop(protocol)`): the parent never guesses.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from yagent.kernel.ptc.errors import Cause, Stop

MAX_LINE = 64 * 1024 * 1024

# The causes a worker may report itself; anything else it claims is a protocol error.
WORKER_CAUSES: frozenset[Cause] = frozenset({Cause.HEAP, Cause.ENGINE, Cause.PROTOCOL})


def encode(message: Mapping[str, Any]) -> bytes:
    return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def decode(line: bytes, *, expect: tuple[str, ...]) -> dict[str, Any]:
    """The message on `line`, whose `op` must be one of `expect`."""
    try:
        message = json.loads(line)
    except ValueError as exc:
        raise Stop(
            Cause.PROTOCOL, f"the worker wrote a line that is not JSON: {line[:80]!r}"
        ) from exc
    if not isinstance(message, dict):
        raise Stop(Cause.PROTOCOL, f"the worker wrote a non-object message: {line[:80]!r}")
    op = message.get("op")
    if op not in expect:
        raise Stop(Cause.PROTOCOL, f"expected one of {list(expect)}, got op {op!r}")
    return message


def logs_of(message: Mapping[str, Any]) -> tuple[list[Any], int]:
    """The console lines and drop count a worker message carries (absent ⇒ none)."""
    lines = message.get("logs", [])
    dropped = message.get("dropped", 0)
    if not isinstance(lines, list) or not isinstance(dropped, int):
        raise Stop(Cause.PROTOCOL, "a worker message with malformed console lines")
    return lines, dropped


def worker_stop(message: Mapping[str, Any]) -> Stop:
    """The stop an `abort` message reports."""
    try:
        cause = Cause(str(message.get("cause")))
    except ValueError:
        cause = Cause.PROTOCOL
    detail = message.get("detail")
    if cause not in WORKER_CAUSES or not isinstance(detail, str):
        return Stop(
            Cause.PROTOCOL, f"the worker reported an abort it cannot report: {message!r:.120}"
        )
    return Stop(cause, detail)
