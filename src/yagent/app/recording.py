"""A stored session's model side as a replay `Recording` (for `yagent replay` and the demo).

A parallel session (`yagent fanout`) is recorded per task: each task's messages (its delegation
id) under the task's name, the identity `yagent fanout PLAN --replay` routes by.
"""

from __future__ import annotations

from typing import Any

from yagent.llm import Message
from yagent.llm.replay import Recording
from yagent.memory import SessionStore, message_body


def recording_of(store: SessionStore, session_id: str) -> tuple[Recording, str, str]:
    """The session's recording, its first task, and the agent that ran it."""
    rows = store.messages(session_id)
    agent = str(store.get_session(session_id).meta.get("agent", "coding"))
    recording = Recording()
    recording.add_transcript(agent, [Message.from_dict(message_body(r)) for r in rows])
    task = next((str(r.get("content", "")) for r in rows if r.get("role") == "user"), "")
    return recording, task, agent


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
