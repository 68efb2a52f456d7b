"""`/undo` from the session's own record, in a real pty: the files a `run_bash` command changed,
created and removed are put back — in a new process, after `/resume` — while a change the
command's watch kept no before-image of is named as not reverted, never guessed."""

from __future__ import annotations

import re
from pathlib import Path

from tests.cli.ptyterm import CTRL_D, Term, configure
from tests.cli.test_robustness import tool_reply
from tests.llm.wire import Reply, WireServer, text_frames
from yagent.cli import edits
from yagent.memory import SessionStore
from yagent.tools.files import journal

EXIT = tool_reply("c9", "agent_exit", {"reason": "done", "summary": "Ran it."})
COMMAND = (
    "sed -i s/beta/BETA/ a.txt && echo new > c.txt && rm d.txt && echo more >> big.txt"
    " && echo hidden > .yagent-free.txt"
)


def test_undo_reverts_a_commands_changes_after_resume_in_a_new_process(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("alpha\nbeta\n")
    (ws / "d.txt").write_text("to be removed\n")
    big = "x" * (300 * 1024) + "\n"  # over the watch's per-file before-image bound
    (ws / "big.txt").write_text(big)
    replies = [tool_reply("c1", "run_bash", {"command": COMMAND}), EXIT]
    replies += [Reply(events=text_frames("noted")) for _ in range(6)]
    home = tmp_path / "home"
    with WireServer(replies) as server:
        configure(home, server.url)
        first = Term(home, ws, ("-y",))
        try:
            first.ready()
            first.line("change things")
            first.wait_for("✓ run_bash")
            first.wait_for("yagent>")
            assert (ws / "c.txt").exists()
            diff = first.answer("/diff")
            assert "+BETA" in diff
            assert "+++ b/c.txt" in diff
            assert "--- a/d.txt" in diff
            assert "big.txt: changed by run_bash; its earlier bytes were not kept" in diff
            first.send(CTRL_D)
            first.wait_for("resume: yagent resume ")
            assert first.finish() == 0
        finally:
            first.close()
        found = re.search(r"resume: yagent resume (\w+)", first.text)
        assert found, first.text
        second = Term(home, ws)  # a new process
        try:
            second.ready()
            assert "resumed" in second.answer(f"/resume {found.group(1)}")
            undo = second.answer("/undo")
            assert "restored a.txt (run_bash)" in undo
            assert "removed c.txt (the turn created it)" in undo
            assert "restored d.txt (removed by run_bash c1)" in undo
            assert "not reverted big.txt: run_bash c1 changed it" in undo
            assert "nothing to undo" in second.answer("/undo")  # the undo is recorded too
            second.send(CTRL_D)
            assert second.finish() == 0
        finally:
            second.close()
    assert (ws / "a.txt").read_text() == "alpha\nbeta\n"
    assert not (ws / "c.txt").exists()
    assert not (ws / ".yagent-free.txt").exists()
    assert (ws / "d.txt").read_text() == "to be removed\n"
    assert (ws / "big.txt").read_text() == big + "more\n"  # named, not guessed


def test_undo_reads_turns_from_the_store_and_says_what_it_could_not_read(tmp_path: Path) -> None:
    """Without a pty: the record alone (journal + store) decides; an unreadable turn record is
    skipped and said, and an undone turn is not undone twice."""
    ws, state = tmp_path / "ws", tmp_path / "state"
    ws.mkdir()
    (ws / "a.txt").write_text("new\n")
    journal.change(state, "c1", "write_file", "a.txt", b"old\n", b"new\n")
    with SessionStore(tmp_path / "sessions.db") as store:
        sid = store.create_session(workspace=str(ws), title="t").id
        store.archive(sid, kind=edits.TURN_KIND, payload={"first": "x"})  # damaged
        store.archive(sid, kind=edits.TURN_KIND, payload={"first": 0, "last": 1})
        said = [line for line, _ in edits.undo(store, sid, state, ws)]
        assert said == [
            "restored a.txt (write_file)",
            "1 unreadable turn record(s) in the session store skipped",
        ]
        assert (ws / "a.txt").read_text() == "old\n"
        again = [line for line, _ in edits.undo(store, sid, state, ws)]
        assert again[0].startswith("nothing to undo")
