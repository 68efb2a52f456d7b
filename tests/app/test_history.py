"""Stored history as the model gets it (`app.history.from_store`), read from a real store in
the shape a second runner left behind: two results for one call id, the same turn twice."""

from __future__ import annotations

from pathlib import Path

from yagent.app.history import from_store
from yagent.llm import Message, ToolCall
from yagent.memory import SessionStore

CALL = ToolCall("c1", "run_bash", '{"command": "make"}')


def stored(tmp_path: Path, *messages: Message) -> list[Message]:
    with SessionStore(tmp_path / "sessions.db") as store:
        sid = store.create_session(workspace=str(tmp_path)).id
        for message in messages:
            store.append_message(sid, message.to_dict())
        return from_store(store.messages(sid))


def test_the_last_result_for_a_call_wins_and_sits_after_its_turn(tmp_path: Path) -> None:
    turn = Message("assistant", "building", (CALL,))
    died = Message("tool", "INTERRUPTED — the process died", tool_call_id="c1", name="run_bash")
    real = Message("tool", "built ok", tool_call_id="c1", name="run_bash")
    nudge = Message("user", "go on")
    history = stored(tmp_path, Message("user", "task"), turn, died, nudge, real)
    assert history == [Message("user", "task"), turn, real, nudge]


def test_a_repeated_assistant_turn_is_not_sent_twice(tmp_path: Path) -> None:
    turn = Message("assistant", "building", (CALL,))
    result = Message("tool", "built ok", tool_call_id="c1", name="run_bash")
    done = Message("assistant", "done")
    history = stored(tmp_path, Message("user", "task"), turn, result, turn, result, done)
    assert history == [Message("user", "task"), turn, result, done]
    calls = [c.id for m in history for c in m.tool_calls]
    results = [m.tool_call_id for m in history if m.role == "tool"]
    assert calls == results == ["c1"]


def test_a_clean_history_is_unchanged_and_an_orphan_stays_put(tmp_path: Path) -> None:
    other = ToolCall("c2", "read_file", "{}")
    clean = [
        Message("user", "task"),
        Message("assistant", "", (CALL, other)),
        Message("tool", "a", tool_call_id="c1", name="run_bash"),
        Message("tool", "b", tool_call_id="c2", name="read_file"),
        Message("tool", "orphan", tool_call_id="zz", name="x"),
        Message("assistant", "done"),
    ]
    assert stored(tmp_path, *clean) == clean
