"""Session references: `@session:<id-or-prefix>` in a task brings another session's conclusion in.

Contract:
- Each distinct reference in a task is resolved with the store's prefix lookup. A session that
  does not exist, an ambiguous prefix, or this session itself is not an error: the task gets a
  band saying so (a reference never silently disappears).
- The conclusion is the session's last deliverable (a successful exit result, judged by
  `exitpolicy`), else its last assistant text. It is captured with `sessionref`: at most
  `MAX_BYTES` (cut explicitly), source = the session id, version = its number of messages,
  TTL `TTL` seconds; the snapshot is kept in this session's archive (kind `sessionref`) and its
  rendering (a `session-ref` band: state, provenance, truncation) is appended to the task.
- When a session continues, every snapshot captured in it earlier is judged again against its
  source's current version and the clock: one that turned `stale` or `expired` is rendered again
  with that label, once per state (recorded as kind `sessionref-state`), so the model learns that
  what it was told is no longer current. A source that was deleted counts as version -1 (stale).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import asdict
from typing import Any

from yagent.agents import exitpolicy
from yagent.kernel.context import reminder, sessionref
from yagent.memory import (
    AmbiguousSessionError,
    SessionNotFoundError,
    SessionStore,
    message_body,
)

REFERENCE = re.compile(r"@session:([0-9A-Za-z][0-9A-Za-z_-]{0,63})")
MAX_BYTES = 8 * 1024
TTL = 24 * 3600.0
SNAPSHOT_KIND = "sessionref"
STATE_KIND = "sessionref-state"
NO_CONCLUSION = "(no conclusion yet: the session has no deliverable and no assistant reply)"


def references(task: str) -> list[str]:
    """The distinct session keys referenced in a task, in order."""
    return list(dict.fromkeys(match.group(1) for match in REFERENCE.finditer(task)))


def conclusion(store: SessionStore, session_id: str) -> str:
    """The session's last deliverable, else its last assistant text ("" when neither)."""
    bodies = [message_body(row) for row in store.messages(session_id)]
    for body in reversed(bodies):
        if body.get("role") == "tool":
            delivered = exitpolicy.deliverable_text(str(body.get("content", "")))
            if delivered:
                return delivered
    for body in reversed(bodies):
        text = str(body.get("content", "") or "")
        if body.get("role") == "assistant" and text.strip():
            return text
    return ""


def version(store: SessionStore, session_id: str) -> int:
    try:
        store.get_session(session_id)
    except SessionNotFoundError:
        return -1
    return len(store.messages(session_id))


def _unresolved(key: str, why: str) -> str:
    return reminder.wrap(f"session reference @session:{key}: {why}", kind=sessionref.KIND)


def _snapshot(payload: Mapping[str, Any]) -> sessionref.Conclusion:
    return sessionref.Conclusion(
        source=str(payload["source"]),
        source_version=payload["source_version"],
        text=str(payload["text"]),
        truncated=bool(payload["truncated"]),
        original_bytes=int(payload["original_bytes"]),
        captured_at=float(payload["captured_at"]),
        expires_at=float(payload["expires_at"]),
    )


def _fact(key: str, **facts: Any) -> dict[str, Any]:
    return {"reference": key, **facts}


def resolve(
    store: SessionStore, task: str, *, current: str, clock: sessionref.Clock
) -> tuple[list[str], list[dict[str, Any]]]:
    """Bands for the references in `task`, and one fact per reference (for an event)."""
    bands: list[str] = []
    facts: list[dict[str, Any]] = []
    for key in references(task):
        try:
            info = store.get_session(key)
        except AmbiguousSessionError as exc:
            shown = ", ".join(exc.candidates)
            bands.append(_unresolved(key, f"ambiguous prefix ({exc.total} sessions: {shown}…)"))
            facts.append(_fact(key, resolved=False, why="ambiguous"))
            continue
        except SessionNotFoundError:
            bands.append(_unresolved(key, "no such session"))
            facts.append(_fact(key, resolved=False, why="not found"))
            continue
        if info.id == current:
            bands.append(_unresolved(key, "that is this session itself; nothing to bring in"))
            facts.append(_fact(key, resolved=False, why="self"))
            continue
        now_version = version(store, info.id)
        text = conclusion(store, info.id) or NO_CONCLUSION
        snap = sessionref.capture(info.id, now_version, text, MAX_BYTES, TTL, clock)
        store.archive(current, kind=SNAPSHOT_KIND, payload=asdict(snap))
        bands.append(sessionref.render(snap, now_version, clock.now()))
        facts.append(
            _fact(
                key,
                resolved=True,
                source=info.id,
                version=now_version,
                truncated=snap.truncated,
                original_bytes=snap.original_bytes,
                state=sessionref.state(snap, now_version, clock.now()).value,
            )
        )
    return bands, facts


def carried(
    store: SessionStore, session_id: str, *, clock: sessionref.Clock
) -> tuple[list[str], list[dict[str, Any]]]:
    """Earlier snapshots of this session that are no longer fresh, rendered once per state."""
    reported = {
        (rec.payload.get("capture"), rec.payload.get("state"))
        for rec in store.archived(session_id, STATE_KIND)
    }
    bands: list[str] = []
    facts: list[dict[str, Any]] = []
    for record in store.archived(session_id, SNAPSHOT_KIND):
        snap = _snapshot(record.payload)
        current = version(store, snap.source)
        now = clock.now()
        label = sessionref.state(snap, current, now)
        if label is sessionref.State.FRESH or (record.seq, label.value) in reported:
            continue
        store.archive(
            session_id, kind=STATE_KIND, payload={"capture": record.seq, "state": label.value}
        )
        bands.append(sessionref.render(snap, current, now))
        facts.append(_fact(snap.source, resolved=True, source=snap.source, state=label.value))
    return bands, facts


def expand(
    store: SessionStore, task: str, *, session_id: str, continued: bool, clock: sessionref.Clock
) -> tuple[str, list[dict[str, Any]]]:
    """The task as the model receives it: references (and, when continued, changes) appended."""
    bands, facts = carried(store, session_id, clock=clock) if continued else ([], [])
    new_bands, new_facts = resolve(store, task, current=session_id, clock=clock)
    bands += new_bands
    facts += new_facts
    if not bands:
        return task, facts
    return task + "\n\n" + "\n\n".join(bands), facts
