"""The session store as the Meta agent reads it (`tools.hostservices.SessionReader`).

Contract:
- Read only: nothing here writes a store. One reader per run, bound to the run's own session
  (`current`, marked in listings and never the answer to 'last') and its workspace.
- `list_sessions(limit, all_workspaces)`: this workspace's sessions (or every one), most recently
  active first, with `truncated` saying when more exist than were listed.
- `read_session(session, part, offset, limit)`: `session` is an id, a unique prefix, or 'last'
  (the most recently active session of this workspace other than the current one). `overview`
  says the session's status, how each recorded run ended (`run_end` events), the failed and the
  unanswered tool calls with their error texts, and the last reply; the other parts
  (`messages`, `tool_calls`, `events`, `trace` lines from `app.timeline.render_text`, imported
  when a trace is first read) are pages with `total`, and `next_offset` when more remain.
- Every text is cut at `CLIP` characters and the cut is said in the text; a page never holds
  more than `limit` items. A session not found, an ambiguous prefix, or no earlier session for
  'last' is a `LookupError` with the store's words.
Leaves to the tools layer: neutralising what is returned (it is a tool result).
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from yagent.memory import SessionStore
from yagent.memory.records import SessionInfo

CLIP = 2000  # characters of one text shown (a seam for tests)
FAILED_SHOWN = 20  # failed calls listed in an overview


def clip(text: str, limit: int | None = None) -> str:
    limit = CLIP if limit is None else limit
    if len(text) <= limit:
        return text
    return text[:limit] + f" … [{len(text) - limit} more characters cut]"


def _when(ts: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts))


def _page(items: Sequence[Any], offset: int, limit: int) -> dict[str, Any]:
    shown = list(items[offset : offset + limit])
    out: dict[str, Any] = {"total": len(items), "offset": offset, "items": shown}
    if offset + len(shown) < len(items):
        out["next_offset"] = offset + len(shown)
    return out


class StoreReader:
    def __init__(self, store: SessionStore, workspace: Path, current: str) -> None:
        self.store = store
        self.workspace = str(workspace)
        self.current = current

    def _info(self, info: SessionInfo) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": info.id,
            "title": clip(info.title, 200),
            "status": info.status,
            "agent": str(info.meta.get("agent", "")),
            "workspace": info.workspace,
            "model": info.model,
            "created": _when(info.created_at),
            "last_active": _when(info.updated_at),
        }
        if info.id == self.current:
            out["current"] = True
        return out

    def list_sessions(self, limit: int, all_workspaces: bool) -> dict[str, Any]:
        where = None if all_workspaces else self.workspace
        found = self.store.list_sessions(limit=limit + 1, workspace=where)
        out: dict[str, Any] = {"sessions": [self._info(s) for s in found[:limit]]}
        if len(found) > limit:
            out["truncated"] = f"more than {limit} sessions: raise limit to see older ones"
        return out

    def _resolve(self, session: str) -> SessionInfo:
        if session.strip().lower() != "last":
            return self.store.get_session(session)
        for info in self.store.list_sessions(limit=2, workspace=self.workspace):
            if info.id != self.current:
                return info
        raise LookupError("no earlier session in this workspace")

    def read_session(self, session: str, part: str, offset: int, limit: int) -> dict[str, Any]:
        info = self._resolve(session)
        head: dict[str, Any] = {"session": self._info(info), "part": part}
        if part == "overview":
            return {**head, **self._overview(info.id)}
        if part == "messages":
            items: list[Any] = [_message(m) for m in self.store.messages(info.id)]
        elif part == "tool_calls":
            items = [_call(c.to_dict()) for c in self.store.tool_calls(info.id)]
        elif part == "events":
            items = [_event(e.to_dict()) for e in self.store.events(info.id)]
        elif part == "trace":
            from yagent.app import timeline  # the projection's rows load with a trace read

            items = timeline.render_text(self.store.events(info.id)).splitlines()
        else:
            raise LookupError(f"unknown part {part!r}")
        return {**head, **_page(items, offset, limit)}

    def _overview(self, session_id: str) -> dict[str, Any]:
        calls = self.store.tool_calls(session_id)
        failed = [_call(c.to_dict()) for c in calls if c.ok is False]
        open_calls = [_call(c.to_dict()) for c in calls if c.ok is None]
        runs = [
            {
                "agent": e.payload.get("agent", ""),
                "delegation_id": e.delegation_id,
                "status": e.payload.get("status", ""),
                "steps": e.payload.get("steps"),
                "error": clip(str(e.payload.get("error") or "")),
            }
            for e in self.store.events(session_id, types="run_end")
        ]
        replies = [m for m in self.store.messages(session_id) if m.get("role") == "assistant"]
        last = next(
            (str(m.get("content") or "") for m in reversed(replies) if m.get("content")), ""
        )
        out: dict[str, Any] = {
            "runs": runs,
            "tool_calls": len(calls),
            "failed_calls": failed[:FAILED_SHOWN],
            "last_reply": clip(last),
        }
        if len(failed) > FAILED_SHOWN:
            out["failed_calls_cut"] = (
                f"{len(failed) - FAILED_SHOWN} more failed calls: part=tool_calls"
            )
        if open_calls:
            out["calls_without_result"] = open_calls[:FAILED_SHOWN]
        return out


def _message(body: dict[str, Any]) -> dict[str, Any]:
    out = {k: body.get(k) for k in ("seq", "role", "agent", "delegation_id")}
    out["content"] = clip(str(body.get("content") or ""))
    calls = body.get("tool_calls") or []
    if calls:
        out["tool_calls"] = [
            {"name": c.get("name"), "arguments": clip(str(c.get("arguments", "")), 500)}
            for c in calls
            if isinstance(c, dict)
        ]
    return out


def _call(record: dict[str, Any]) -> dict[str, Any]:
    out = {k: record.get(k) for k in ("seq", "call_id", "name", "delegation_id", "ok", "kind")}
    out["arguments"] = clip(str(record.get("arguments") or ""), 500)
    out["result"] = clip(str(record.get("content") or ""))
    return out


def _event(record: dict[str, Any]) -> dict[str, Any]:
    payload = json.dumps(record.get("payload"), sort_keys=True, default=str)
    return {
        "seq": record.get("seq"),
        "type": record.get("type"),
        "delegation_id": record.get("delegation_id"),
        "payload": clip(payload),
    }
