"""A stored session's model side as a replay `Recording` (for `yagent replay` and the demo)."""

from __future__ import annotations

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
