"""Records handed to the store, and what the store makes of each before a transaction opens.

Contract: `check(record)` turns one `Pending*` value into the tuple `memory.pending` writes (its
kind first), or raises `TypeError` / `ValueError` saying what is wrong — JSON objects by
`codec`, text, counts, times and costs here — so a refused record writes nothing of its list.
A JSON object is encoded here, once; an event that may keep its content by reference keeps a copy
(the reference is decided in the transaction). Leaves to `memory.pending`: seqs, the statements.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from yagent.memory import codec
from yagent.memory.codec import text_arg
from yagent.memory.records import MESSAGE_META_KEYS

# The key an event payload holds instead of `content` when its text lives in a tool message.
CONTENT_REF = "content_message"


@dataclass(slots=True, eq=False)
class PendingMessage:
    """A message to append (a JSON object); `seq` once stored (see the module contract)."""

    body: Mapping[str, Any]
    agent: str = ""
    delegation_id: str = ""
    seq: int | None = field(default=None, init=False)
    content: str | None = field(default=None, init=False, repr=False)  # as stored, when text


@dataclass(slots=True, eq=False)
class PendingEvent:
    """A rollout record; `content_message` may hold its `content` (kept by reference)."""

    type: str
    payload: Mapping[str, Any]
    delegation_id: str = ""
    content_message: PendingMessage | int | None = None


@dataclass(slots=True, eq=False, kw_only=True)
class PendingUsage:
    """One model call's usage; `cost=None` means unknown (never read as 0)."""

    model: str
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost: float | None
    delegation_id: str = ""


@dataclass(slots=True, eq=False, kw_only=True)
class PendingCall:
    """A tool call before it runs (`arguments` as the model sent them)."""

    call_id: str
    name: str
    arguments: str
    started_at: float
    delegation_id: str = ""


@dataclass(slots=True, eq=False, kw_only=True)
class PendingResult:
    """A result for a recorded call; `delegation_id` None matches the call in any delegation."""

    call_id: str
    content: str
    ok: bool
    kind: str | None
    ended_at: float
    delegation_id: str | None = None
    content_message: PendingMessage | int | None = None


@dataclass(slots=True, eq=False, kw_only=True)
class PendingCheckpoint:
    """A checkpoint of the run `delegation_id`, stopped at `step` (a JSON object)."""

    step: int
    data: Mapping[str, Any]
    delegation_id: str = ""


@dataclass(slots=True, eq=False, kw_only=True)
class PendingArchive:
    """Something compaction removed from the live context (a JSON object), of a `kind`."""

    kind: str
    payload: Mapping[str, Any]


Pending = (
    PendingEvent
    | PendingMessage
    | PendingUsage
    | PendingCall
    | PendingResult
    | PendingCheckpoint
    | PendingArchive
)


def time_arg(value: object, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise TypeError(f"{what} must be a finite number of seconds, got {value!r}")
    return float(value)


def count_arg(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{what} must be an int, got {value!r}")
    if value < 0:
        raise ValueError(f"{what} must be >= 0, got {value}")
    return value


def cost_arg(value: object) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise TypeError(f"cost must be a finite number or None (unknown), got {value!r}")
    if value < 0:
        raise ValueError(f"cost must be >= 0, got {value}")
    return float(value)


_META_KEYS = frozenset(MESSAGE_META_KEYS)

# What `_check` makes of each record: a tuple whose first item says which kind it is.
EVENT, MESSAGE, USAGE, CALL, RESULT, CHECKPOINT, ARCHIVE = range(7)


def _event(record: PendingEvent) -> tuple[Any, ...]:
    kind = text_arg(record.type, "event type")
    delegation = text_arg(record.delegation_id, "delegation_id")
    payload, ref = record.payload, record.content_message
    if ref is None and type(payload) is dict and CONTENT_REF not in payload:
        # no reference possible: encoded now, once, without a copy
        text = codec.encode_object(payload, "event payload")
        return (EVENT, kind, delegation, codec.pack(text), None)
    values = (kind, delegation)
    body = codec.normalise_object(payload, "event payload")  # a copy: may lose its content
    if CONTENT_REF in body:
        raise ValueError(f"event payload carries the store's own key {CONTENT_REF!r}")
    if ref is None:
        return (EVENT, *values, codec.pack(codec.dumps(body)), None)
    return (EVENT, *values, body, ref)


def _message(record: PendingMessage) -> tuple[Any, ...]:
    body = record.body
    text = codec.encode_object(body, "message")  # refuses a body that is not an object
    if not _META_KEYS.isdisjoint(body):
        reserved = sorted(_META_KEYS.intersection(body))
        raise ValueError(
            f"message carries the store's own keys {reserved}; pass agent / delegation_id as "
            "arguments (message_body() strips a row read back from messages())"
        )
    content = body.get("content")
    return (
        MESSAGE,
        text_arg(record.agent, "agent"),
        text_arg(record.delegation_id, "delegation_id"),
        codec.pack(text),
        content if isinstance(content, str) else None,
        record,
    )


def _usage(record: PendingUsage) -> tuple[Any, ...]:
    return (
        USAGE,
        text_arg(record.model, "model"),
        text_arg(record.delegation_id, "delegation_id"),
        count_arg(record.input_tokens, "input_tokens"),
        count_arg(record.output_tokens, "output_tokens"),
        count_arg(record.cache_read_tokens, "cache_read_tokens"),
        count_arg(record.cache_write_tokens, "cache_write_tokens"),
        cost_arg(record.cost),
    )


def _call(record: PendingCall) -> tuple[Any, ...]:
    return (
        CALL,
        text_arg(record.call_id, "call_id"),
        text_arg(record.name, "name"),
        text_arg(record.arguments, "arguments"),
        text_arg(record.delegation_id, "delegation_id"),
        time_arg(record.started_at, "started_at"),
    )


def _result(record: PendingResult) -> tuple[Any, ...]:
    if not isinstance(record.ok, bool):
        raise TypeError(f"ok must be a bool, got {record.ok!r}")
    if record.kind is not None:
        text_arg(record.kind, "kind")
    delegation = record.delegation_id
    return (
        RESULT,
        text_arg(record.call_id, "call_id"),
        time_arg(record.ended_at, "ended_at"),
        text_arg(record.content, "content"),
        int(record.ok),
        record.kind,
        None if delegation is None else text_arg(delegation, "delegation_id"),
        record.content_message,
    )


def _checkpoint(record: PendingCheckpoint) -> tuple[Any, ...]:
    return (
        CHECKPOINT,
        text_arg(record.delegation_id, "delegation_id"),
        count_arg(record.step, "step"),
        codec.encode_object(record.data, "checkpoint data"),
    )


def _archive(record: PendingArchive) -> tuple[Any, ...]:
    return (
        ARCHIVE,
        text_arg(record.kind, "kind"),
        codec.encode_object(record.payload, "archive payload"),
    )


_CHECKS: dict[type, Any] = {
    PendingEvent: _event,
    PendingMessage: _message,
    PendingUsage: _usage,
    PendingCall: _call,
    PendingResult: _result,
    PendingCheckpoint: _checkpoint,
    PendingArchive: _archive,
}


def check(record: Pending) -> tuple[Any, ...]:
    """A record's checked values (see the module contract); raises before any write."""
    check = _CHECKS.get(type(record))
    if check is None:
        raise TypeError(f"not a record the store writes: {type(record).__name__}")
    values: tuple[Any, ...] = check(record)
    return values
