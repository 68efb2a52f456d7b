"""A tool call's result, as the model and the store receive it.

Contract: `ToolResult` is the one result type of a tool call (exactly one per call); `serialise`
turns an executor's return value into one with `json.dumps` (an unserialisable value is an
INTERNAL failure, never an empty result; a `WithImages` value keeps its images beside the text);
`failure_content` is the one wording of a failure the model reads: the message, the `toolfail`
kind, whether to retry and the table's guidance.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from yagent.kernel.judge import toolfail
from yagent.kernel.judge.invoke import Judgement


@dataclass(frozen=True, slots=True)
class ToolResult:
    call_id: str
    name: str
    ok: bool
    content: str
    kind: toolfail.Kind | None = None
    data: Any = None
    judgement: Judgement | None = None
    images: tuple[tuple[str, str], ...] = ()  # (MIME type, base64) for a model that takes images


@dataclass(frozen=True, slots=True)
class WithImages:
    """An executor's result whose images travel beside its serialised text, not inside it."""

    data: Any
    images: tuple[tuple[str, str], ...]


def failure_content(kind: toolfail.Kind, message: str, **extra: Any) -> str:
    body = {
        "error": message,
        "kind": kind.value,
        "retryable": toolfail.retryable(kind),
        "guidance": toolfail.guidance(kind),
        **extra,
    }
    return json.dumps(body, ensure_ascii=False)


def serialise(call_id: str, name: str, data: Any) -> ToolResult:
    """Step 4's last part: `json.dumps` the executor's result; unserialisable is an error."""
    images: tuple[tuple[str, str], ...] = ()
    if isinstance(data, WithImages):
        data, images = data.data, data.images
    if isinstance(data, BaseModel):
        data = data.model_dump(mode="json")
    try:
        content = json.dumps(data, ensure_ascii=False)
    except (TypeError, ValueError) as exc:
        kind = toolfail.Kind.INTERNAL
        msg = f"{name} returned a result that cannot be serialised ({exc})"
        return ToolResult(call_id, name, False, failure_content(kind, msg), kind)
    return ToolResult(call_id, name, True, content, None, data, images=images)
