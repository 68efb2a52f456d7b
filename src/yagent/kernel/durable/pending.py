"""pending: the carrier for "something is awaited" across turns (an approval, an answer, ...).

Guarantees:
- `Pending` is an immutable value: what is awaited (`kind`, `id`), a JSON-object `payload`
  (deep-frozen: objects become read-only mappings, arrays tuples) and `created_at`.
- `encode(state)` is the ONE encoding: canonical JSON (sorted keys, no spaces, ASCII-only, a format
  version), so equal states encode to equal strings.
- `decode(value)` is tolerant: anything that is not exactly what `encode` writes (None, empty,
  not a str, bytes, bad JSON, another version, missing / extra / mistyped fields, non-finite
  numbers, absurd nesting) means "nothing is pending" (None). It never raises, so a damaged
  carrier degrades to "no pending" instead of breaking the turn. `decode(encode(x)) == x`.
Refuses (at construction, with `PendingError`): empty kind or id, non-JSON payloads, NaN/inf.
Leaves to the host: what each kind means, where the string is stored, and expiry policy
(`created_at` comes from an injectable clock so the host can judge age deterministically).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from yagent.kernel.durable.clock import Clock as Clock
from yagent.kernel.durable.clock import SystemClock as SystemClock

VERSION = 1
_FIELDS = frozenset({"v", "kind", "id", "payload", "created_at"})


class PendingError(ValueError):
    """A pending state that cannot exist (raised by construction, never by `decode`)."""


def _freeze(value: Any, path: str) -> Any:
    """A deep read-only copy of a JSON value; anything else is refused."""
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise PendingError(f"pending: {path} is not a finite number")
        return value
    if isinstance(value, Mapping):
        frozen: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise PendingError(f"pending: {path} has a non-string key {key!r}")
            frozen[key] = _freeze(item, f"{path}.{key}")
        return MappingProxyType(frozen)
    if isinstance(value, Sequence) and not isinstance(value, bytes | bytearray):
        return tuple(_freeze(item, f"{path}[{i}]") for i, item in enumerate(value))
    raise PendingError(f"pending: {path} is a {type(value).__name__}, not a JSON value")


def _thaw(value: Any) -> Any:
    if isinstance(value, MappingProxyType):
        return {k: _thaw(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return [_thaw(v) for v in value]
    return value


@dataclass(frozen=True, slots=True)
class Pending:
    """What the conversation is waiting for."""

    kind: str
    id: str
    payload: Mapping[str, Any] = field(default_factory=dict, hash=False)
    created_at: float = 0.0

    def __post_init__(self) -> None:
        for name in ("kind", "id"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value:
                raise PendingError(f"pending: {name} must be a non-empty string")
        if not isinstance(self.payload, Mapping):
            raise PendingError("pending: payload must be a JSON object")
        object.__setattr__(self, "payload", _freeze(self.payload, "payload"))
        at = self.created_at
        if isinstance(at, bool) or not isinstance(at, int | float) or not math.isfinite(at):
            raise PendingError("pending: created_at must be a finite number")
        object.__setattr__(self, "created_at", float(at))


def create(
    kind: str, id: str, payload: Mapping[str, Any] | None = None, *, clock: Clock | None = None
) -> Pending:
    """A pending state stamped with `clock.now()` (the system clock by default)."""
    now = (clock or SystemClock()).now()
    return Pending(kind, id, payload if payload is not None else {}, now)


def encode(state: Pending) -> str:
    """The one encoding of a pending state: canonical JSON."""
    if not isinstance(state, Pending):
        raise PendingError(f"pending.encode: expected Pending, got {type(state).__name__}")
    document = {
        "v": VERSION,
        "kind": state.kind,
        "id": state.id,
        "payload": _thaw(state.payload),
        "created_at": state.created_at,
    }
    return json.dumps(
        document, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False
    )


def _reject_constant(name: str) -> Any:
    raise ValueError(f"non-finite number {name}")


MAX_DEPTH = 64  # payload nesting beyond this is not a pending state (and not a stack to recurse)


def _too_deep(document: object) -> bool:
    """Nesting deeper than MAX_DEPTH, measured without recursion (the interpreter's recursion
    limit differs between processes, so it must not be what decides)."""
    stack: list[tuple[object, int]] = [(document, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            return True
        if isinstance(node, dict):
            stack.extend((child, depth + 1) for child in node.values())
        elif isinstance(node, list):
            stack.extend((child, depth + 1) for child in node)
    return False


def decode(value: object) -> Pending | None:
    """The pending state `value` encodes, or None when it encodes none. Never raises."""
    if not isinstance(value, str) or not value:
        return None
    try:
        document = json.loads(value, parse_constant=_reject_constant)
    except (ValueError, RecursionError):
        return None
    if not isinstance(document, dict) or set(document) != _FIELDS or _too_deep(document):
        return None
    version = document["v"]
    if type(version) is not int or version != VERSION:
        return None
    try:
        return Pending(
            document["kind"], document["id"], document["payload"], document["created_at"]
        )
    except (PendingError, RecursionError):
        return None
