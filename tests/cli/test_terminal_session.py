"""What a turn looks like in the interactive terminal (a real pty): compact tool lines, edits as
diffs, long blocks folded with a visible count and whole in `/last`, approvals that show what will
happen with one-key answers, `/diff` and `/undo` from the session's own record (never the
person's changes), and the Ctrl-D summary."""

from __future__ import annotations

from pathlib import Path

from tests.cli.ptyterm import CTRL_D, Term, configure
from tests.cli.test_robustness import tool_reply
from tests.llm.wire import Reply, WireServer, text_frames

EXIT = tool_reply("c9", "agent_exit", {"reason": "done", "summary": "Edited **three** files."})


def user_texts(server: WireServer) -> list[str]:
    return [
        m["content"]
        for r in server.received
        for m in r.body["messages"]
        if m["role"] == "user" and isinstance(m["content"], str)
    ]


def test_edits_show_as_diffs_and_undo_reverts_only_the_sessions_own(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("alpha\nbeta\ngamma\n")
    (ws / "b.txt").write_text("one\ntwo\n")
    (ws / "mine.txt").write_text("the person's file\n")
    long_text = "".join(f"line {n}\n" for n in range(60))
    replies = [
        tool_reply(
            "c1",
            "search_replace_in_file",
            {"path": "a.txt", "old_string": "beta", "new_string": "BETA"},
        ),
        tool_reply(
            "c2",
            "search_replace_in_file",
            {"path": "b.txt", "old_string": "two", "new_string": "TWO"},
        ),
        tool_reply("c3", "write_file", {"path": "new.txt", "content": "created\n"}),
        tool_reply(
            "c4",
            "search_replace_in_file",
            {"path": "a.txt", "old_string": "gamma\n", "new_string": long_text},
        ),
        EXIT,
        *[Reply(events=text_frames("noted")) for _ in range(6)],
    ]
    home = tmp_path / "home"
    with WireServer(replies) as server:
        configure(home, server.url)
        term = Term(home, ws)
        try:
            term.ready()
            term.line("edit them")
            term.wait_for("● search_replace_in_file a.txt")
            term.wait_for("✓ search_replace_in_file")
            term.wait_for("-beta")
            term.wait_for("+BETA")
            term.wait_for("● write_file new.txt")
            term.wait_for("more lines (/last or /diff shows them)")  # the 60-line edit, folded
            term.wait_for("Edited three files.")  # the summary rendered as Markdown
            term.wait_for("yagent>")
            term.send("\x0f")  # Ctrl-O: the last turn's results in full, as /last
            term.wait_for("+line 59")  # the whole receipt diff
            term.wait_for("yagent>")
            (ws / "b.txt").write_text("one\nTWO\nthe person's own line\n")  # the person edits
            (ws / "mine.txt").write_text("the person's file, changed\n")
            term.line("/diff")
            term.wait_for("+++ b/new.txt")
            term.wait_for("yagent>")
            undo = term.answer("/undo")
            assert "restored a.txt" in undo
            assert "removed new.txt (the turn created it)" in undo
            assert "left b.txt: changed since the agent's edit" in undo
            assert "+the person's own line" in undo  # the refusal shows what the person did
            term.line("/undo")
            term.wait_for("nothing to undo")
            term.line("and now?")
            term.wait_for("noted")
            term.wait_for("yagent>")
            term.send(CTRL_D)
            summary = term.wait_for("resume: yagent resume ")
            assert "3 file(s) changed" in summary
            assert term.finish() == 0
        finally:
            term.close()
        texts = user_texts(server)
    assert (ws / "a.txt").read_text() == "alpha\nbeta\ngamma\n"
    assert not (ws / "new.txt").exists()
    assert (ws / "b.txt").read_text() == "one\nTWO\nthe person's own line\n"  # kept
    assert (ws / "mine.txt").read_text() == "the person's file, changed\n"  # never touched
    told = [t for t in texts if "reverted these edits of yours with /undo" in t]
    assert told
    assert "restored a.txt" in told[0]


def test_approvals_show_what_will_happen_and_take_one_key(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    target = outside / "o.txt"
    replies = [
        tool_reply("c1", "write_file", {"path": str(target), "content": "hello\nworld\n"}),
        tool_reply("c2", "run_bash", {"command": "rm -rf build && echo cleaned"}),
        EXIT,
    ]
    home = tmp_path / "home"
    with WireServer(replies) as server:
        configure(home, server.url)
        term = Term(home, ws)
        try:
            term.ready()
            term.line("go")
            term.wait_for("! write_file needs your approval")
            term.wait_for("outside the workspace")  # why it is a question
            term.wait_for(f"writes {target}: 12 bytes, 2 lines")
            term.wait_for("+world")
            term.wait_for("always allow write_file in this session (kept in memory only)")
            term.wait_for("allow?")
            term.send("n")
            term.wait_for("→ no")
            term.wait_for("! run_bash needs your approval")
            term.wait_for("rm -rf build → prompt")  # the rule that made it a question
            term.wait_for("runs: rm -rf build && echo cleaned")
            term.wait_for("in: sandbox preset workspace-write")
            term.wait_for("an allow rule in .yagent/shell-rules.toml of this workspace")
            term.wait_for("allow?")
            term.send("r")
            term.wait_for("→ remember this command")
            term.wait_for("✓ run_bash")
            term.wait_for("yagent>")
            term.send(CTRL_D)
            assert term.finish() == 0
        finally:
            term.close()
    assert not target.exists()  # refused
    assert "rm" in (ws / ".yagent" / "shell-rules.toml").read_text()
