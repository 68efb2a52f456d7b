"""A stored session's model side as a replay `Recording` (for `yagent replay` and the demo).

A parallel session (`yagent fanout`) is recorded per task: each task's messages (its delegation
id) under the task's name, the identity `yagent fanout PLAN --replay` routes by. A Director
session is recorded the same way: the Director's own messages under its agent, each
delegation's under its name (`<agent>.<call id>`), which its prompt's first line carries
(`lanemarkers.delegation_marker`) — so a replay routes every delegated run to its own recording.
"""

from __future__ import annotations

from typing import Any

from yagent.app.lanemarkers import delegation_marker
from yagent.llm import Message
from yagent.llm.replay import Recording
from yagent.memory import SessionStore, message_body


def recording_of(store: SessionStore, session_id: str) -> tuple[Recording, str, str]:
    """The session's recording, its first task, and the agent that ran it."""
    rows = store.messages(session_id)
    agent = str(store.get_session(session_id).meta.get("agent", "coding"))
    by_run: dict[str, list[Message]] = {agent: []}
    for row in rows:
        delegation = str(row.get("delegation_id") or "")
        name = delegation.split("@", 1)[0] if delegation else agent
        by_run.setdefault(name, []).append(Message.from_dict(message_body(row)))
    recording = Recording()
    for name, messages in by_run.items():
        recording.add_transcript(name, messages)
    top = [r for r in rows if not r.get("delegation_id")]
    task = next((str(r.get("content", "")) for r in top if r.get("role") == "user"), "")
    return recording, task, agent


def markers(recording: Recording, agent: str, marker: str) -> dict[str, str]:
    """How a replay recognises each identity of `recording_of`'s recording: the top-level agent
    by its `marker`, every delegation by its name's marker."""
    found = {name: delegation_marker(name) for name in recording.agents if name != agent}
    return {**found, agent: marker}


def parallel_recording(store: SessionStore, session_id: str) -> tuple[Recording, list[Any]] | None:
    """A parallel session's recording, one identity per task, and its stored plan; None when the
    session is not a parallel run with a stored plan."""
    plan = store.get_session(session_id).meta.get("plan")
    if not isinstance(plan, list) or not plan:
        return None
    by_task: dict[str, list[Message]] = {}
    for row in store.messages(session_id):
        delegation = str(row.get("delegation_id") or "")
        if "@" in delegation:
            name = delegation.split("@", 1)[0]
            by_task.setdefault(name, []).append(Message.from_dict(message_body(row)))
    recording = Recording()
    for name, messages in by_task.items():
        recording.add_transcript(name, messages)
    return recording, plan
