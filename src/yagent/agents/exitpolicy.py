"""exitpolicy: the one place that decides "this call ends the run", and what the deliverable is.

Contract:
- A call ends the run only when the agent asked for it (`stop_on_finish`), the tool's spec carries
  the `finishes-run` capability, and the call *succeeded*. A failed exit call is just a failed call.
- The deliverable text is taken only through `deliverable_text()`, judged by the JSON *shape* of the
  exit result — `finished: true` plus a `reason` key — never by agent or tool name.
Neither loop nor agent compares tool names; a source-scanning test holds them to it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from yagent.toolspec import Spec
from yagent.toolspec.builtin import FINISHES


def ends_run(spec: Spec | None, *, ok: bool, stop_on_finish: bool) -> bool:
    return bool(stop_on_finish and ok and spec is not None and FINISHES in spec.tags)


def exit_payload(content: str) -> Mapping[str, Any] | None:
    """The exit result when `content` has its shape (`finished: true` and a `reason`), else None."""
    try:
        data = json.loads(content)
    except (json.JSONDecodeError, TypeError):
        return None
    if isinstance(data, dict) and data.get("finished") is True and "reason" in data:
        return data
    return None


def deliverable_text(content: str) -> str | None:
    """The deliverable carried by an exit result: the summary, else the reason. None otherwise."""
    payload = exit_payload(content)
    if payload is None:
        return None
    summary = payload.get("summary")
    if isinstance(summary, str) and summary.strip():
        return summary
    return str(payload.get("reason", ""))
