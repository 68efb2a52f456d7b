"""Session references: resolution, the bounded snapshot, its state later, every miss said."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from yagent.app import sessionrefs
from yagent.kernel.context import reminder
from yagent.memory import SessionStore


class Clock:
    def __init__(self) -> None:
        self.t = 1_000_000.0

    def now(self) -> float:
        return self.t


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SessionStore]:
    with SessionStore(tmp_path / "s.db") as s:
        yield s


def session(store: SessionStore, *messages: dict[str, object]) -> str:
    sid = store.create_session(workspace="/w", title="t", model="m").id
    for message in messages:
        store.append_message(sid, message)
    return sid


EXIT = json.dumps({"finished": True, "reason": "r", "summary": "the bug is in calc.py"})


def test_references_are_found_once_each_in_order() -> None:
    text = "see @session:abc12 and @session:def, again @session:abc12."
    assert sessionrefs.references(text) == ["abc12", "def"]


def test_the_conclusion_is_the_last_deliverable_else_the_last_reply(store: SessionStore) -> None:
    done = session(
        store,
        {"role": "user", "content": "task"},
        {"role": "tool", "content": EXIT, "tool_call_id": "x", "name": "agent_exit"},
        {"role": "assistant", "content": "after"},
    )
    assert sessionrefs.conclusion(store, done) == "the bug is in calc.py"
    chatty = session(store, {"role": "assistant", "content": "a reply"}, {"role": "assistant"})
    assert sessionrefs.conclusion(store, chatty) == "a reply"
    assert sessionrefs.conclusion(store, session(store)) == ""


def test_a_reference_is_captured_archived_and_rendered_fresh(store: SessionStore) -> None:
    source = session(store, {"role": "assistant", "content": "x" * 10_000})
    current = session(store)
    clock = Clock()
    task, facts = sessionrefs.expand(
        store, f"continue @session:{source}", session_id=current, continued=False, clock=clock
    )
    band = task.split("\n\n", 1)[1]
    body = reminder.unwrap(band) or ""
    assert "state=fresh" in body
    assert f"source={source}" in body
    assert "version=1" in body
    assert "truncated=true" in body
    assert "original_bytes=10000" in body
    assert facts == [
        {
            "reference": source,
            "resolved": True,
            "source": source,
            "version": 1,
            "truncated": True,
            "original_bytes": 10_000,
            "state": "fresh",
        }
    ]
    assert len(store.archived(current, sessionrefs.SNAPSHOT_KIND)) == 1


def test_misses_are_said_not_dropped(store: SessionStore) -> None:
    current = session(store)
    session(store)
    task, facts = sessionrefs.expand(
        store,
        f"@session:ffff @session:0 @session:{current}",
        session_id=current,
        continued=False,
        clock=Clock(),
    )
    assert [f["why"] for f in facts] == ["not found", "ambiguous", "self"]
    assert "no such session" in task
    assert "ambiguous prefix (2 sessions" in task
    assert "this session itself" in task


def test_a_continued_session_learns_once_that_a_reference_went_stale_then_expired(
    store: SessionStore,
) -> None:
    source = session(store, {"role": "assistant", "content": "first answer"})
    current = session(store)
    clock = Clock()
    sessionrefs.expand(
        store, f"@session:{source}", session_id=current, continued=False, clock=clock
    )
    same, facts = sessionrefs.expand(store, "next", session_id=current, continued=True, clock=clock)
    assert same == "next"
    assert facts == []
    store.append_message(source, {"role": "assistant", "content": "second answer"})
    stale, facts = sessionrefs.expand(store, "go", session_id=current, continued=True, clock=clock)
    assert "state=stale" in stale
    assert "current_version=2" in stale
    assert "first answer" in stale
    assert facts[0]["state"] == "stale"
    again, _ = sessionrefs.expand(store, "go", session_id=current, continued=True, clock=clock)
    assert again == "go", "said once per state"
    clock.t += sessionrefs.TTL
    expired, _ = sessionrefs.expand(store, "go", session_id=current, continued=True, clock=clock)
    assert "state=expired" in expired


def test_a_deleted_source_reads_as_version_minus_one(store: SessionStore) -> None:
    assert sessionrefs.version(store, "0" * 26) == -1
