"""C4 / C18: the Meta agent answers questions about past runs from the recorded sessions.

A real `yagent run --json` process against a scripted OpenAI-compatible server on loopback: a
first run in a workspace fails a tool call; then `yagent run --agent meta "what failed in my
last session?"` in the same YAGENT_HOME reads that session through `list_sessions` and
`read_session`, and what the model received holds the real failure of the first session.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.conventions import EXIT, run
from yagent.llm.scripted import call

MISSING = "no-such-file-4f1c.txt"


def _tool_results(received: list[dict[str, object]]) -> list[str]:
    last = received[-1]["messages"]
    assert isinstance(last, list)
    return [str(m.get("content")) for m in last if m.get("role") == "tool"]


def _session_id(events: list[dict[str, object]]) -> str:
    ids = {str(e["session_id"]) for e in events if e.get("session_id")}
    assert len(ids) == 1, ids
    return ids.pop()


def test_c4_meta_agent_reads_the_last_session(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    first = run(
        tmp_path,
        ["read the notes"],
        cwd=work,
        turns=[call("read_file", json.dumps({"path": MISSING}), call_id="r1"), EXIT],
    )
    assert first.done.returncode == 0, first.done.stderr
    failed_session = _session_id(first.events())

    meta_turns = [
        call("list_sessions", "{}", call_id="m1"),
        call("read_session", json.dumps({"session": "last"}), call_id="m2"),
        call(
            "read_session",
            json.dumps({"session": failed_session[:10], "part": "tool_calls"}),
            call_id="m3",
        ),
        call(
            "agent_exit",
            json.dumps({"reason": "read it", "summary": "read_file failed"}),
            call_id="m4",
        ),
    ]
    second = run(
        tmp_path,
        ["--agent", "meta", "what failed in my last session?"],
        cwd=work,
        turns=meta_turns,
    )
    assert second.done.returncode == 0, second.done.stderr
    assert "Meta agent" in second.system
    listed, overview, calls = _tool_results(second.received)
    # the listing names the earlier session and marks the current one
    sessions = json.loads(listed)["sessions"]
    assert [s["id"] for s in sessions if not s.get("current")] == [failed_session]
    assert any(s.get("current") for s in sessions)
    # the overview of 'last' is the earlier session, with its real failed call and error text
    data = json.loads(overview)
    assert data["session"]["id"] == failed_session
    assert data["session"]["title"] == "read the notes"
    (failed,) = data["failed_calls"]
    assert failed["name"] == "read_file"
    assert MISSING in failed["arguments"]
    assert failed["kind"] == "not_found"
    assert MISSING in failed["result"]
    assert [r["status"] for r in data["runs"]] == ["finished"]
    # a page of the tool calls, found by a prefix of the id
    page = json.loads(calls)
    assert page["total"] == 2
    assert [c["name"] for c in page["items"]] == ["read_file", "agent_exit"]


def test_c4_only_meta_has_the_session_tools(tmp_path: Path) -> None:
    """The coding agent asking for `read_session` is refused by the grant ring, naming Meta."""
    work = tmp_path / "work"
    work.mkdir()
    done = run(
        tmp_path,
        ["peek"],
        cwd=work,
        turns=[call("read_session", "{}", call_id="c1"), EXIT],
    )
    assert done.done.returncode == 0, done.done.stderr
    (refusal,) = _tool_results(done.received)
    assert "meta" in refusal
    assert "read_session" in refusal
