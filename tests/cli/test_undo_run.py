"""A one-shot `yagent run` is a turn of its session like an interactive one: `yagent undo
[SESSION]` reverts it without a prompt (and `/undo` after `yagent resume` does too), keeping a
file the person changed since; exit status 0 undone, 1 nothing to undo, 2 refused."""

from __future__ import annotations

import json
import re
from pathlib import Path

import anyio

from tests.cli.ptyterm import CTRL_D, Term
from tests.cli.test_robustness import configure, tool_reply, yagent
from tests.llm.wire import Reply, WireServer, text_frames
from yagent.app.config import load
from yagent.app.durable import open_home
from yagent.app.lease import Holder

EXIT = tool_reply("c9", "agent_exit", {"reason": "done", "summary": "Edited."})


def _edits() -> list[Reply]:
    return [
        tool_reply("c1", "write_file", {"path": "a.txt", "content": "agent wrote a\n"}),
        tool_reply("c2", "write_file", {"path": "new.txt", "content": "created\n"}),
        tool_reply("c3", "write_file", {"path": "mine.txt", "content": "agent wrote mine\n"}),
        EXIT,
    ]


def _workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("original a\n")
    (ws / "mine.txt").write_text("original mine\n")
    return ws


def _session(out: str) -> str:
    found = re.search(r'"session_id": "([^"]+)"', out)
    assert found, out
    return found.group(1)


def test_yagent_undo_reverts_a_one_shot_run_and_keeps_what_the_person_changed(
    tmp_path: Path,
) -> None:
    ws, home = _workspace(tmp_path), tmp_path / "home"
    with WireServer(_edits()) as server:
        configure(home, server.url)
        run = yagent(["run", "-y", "--json", "edit the files"], home, ws)
    assert run.returncode == 0, run.stderr
    assert (ws / "a.txt").read_text() == "agent wrote a\n"
    (ws / "mine.txt").write_text("the person's own edit\n")  # changed since the run

    durable = open_home(home, load(home=home, workspace=ws))
    holder = Holder.this_process()  # a live process holds the session: refused, nothing reverted
    anyio.run(durable.leases.acquire, _session(run.stdout), holder)
    try:
        busy = yagent(["undo"], home, ws)
    finally:
        anyio.run(durable.leases.release, _session(run.stdout), holder)
        durable.close()
    assert busy.returncode == 2, busy.stdout + busy.stderr
    assert "wait for it to end" in busy.stderr
    assert (ws / "a.txt").read_text() == "agent wrote a\n"

    undo = yagent(["undo"], home, ws)  # the latest session of this workspace
    assert undo.returncode == 0, undo.stdout + undo.stderr
    assert "restored a.txt (write_file)" in undo.stdout
    assert "removed new.txt (the turn created it)" in undo.stdout
    assert "left mine.txt: changed since the agent's edit (yours is kept)" in undo.stdout
    assert "+the person's own edit" in undo.stdout  # the diff from what the agent left
    assert (ws / "a.txt").read_text() == "original a\n"
    assert not (ws / "new.txt").exists()
    assert (ws / "mine.txt").read_text() == "the person's own edit\n"

    again = yagent(["undo", _session(run.stdout)[:12]], home, ws)
    assert again.returncode == 1
    assert "nothing to undo" in again.stdout


def test_yagent_undo_refuses_an_unknown_session(tmp_path: Path) -> None:
    ws, home = _workspace(tmp_path), tmp_path / "home"
    configure(home, "http://127.0.0.1:9")
    none_yet = yagent(["undo"], home, ws)
    assert none_yet.returncode == 2
    assert "no session" in none_yet.stderr
    unknown = yagent(["undo", "zzzz"], home, ws)
    assert unknown.returncode == 2
    assert "zzzz" in unknown.stderr


def test_undo_after_resume_reverts_the_one_shot_run(tmp_path: Path) -> None:
    ws, home = _workspace(tmp_path), tmp_path / "home"
    replies = [*_edits(), *(Reply(events=text_frames("noted")) for _ in range(4))]
    with WireServer(replies) as server:
        configure(home, server.url)
        run = yagent(["run", "-y", "--json", "edit the files"], home, ws)
        assert run.returncode == 0, run.stderr
        session = _session(run.stdout)
        term = Term(home, ws, ("resume", session[:12]))
        try:
            term.ready()
            undo = term.answer("/undo")
            assert "restored a.txt (write_file)" in undo
            assert "removed new.txt (the turn created it)" in undo
            term.send(CTRL_D)
            assert term.finish() == 0
        finally:
            term.close()
    assert (ws / "a.txt").read_text() == "original a\n"
    assert (ws / "mine.txt").read_text() == "original mine\n"
    lines = [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]
    assert any(line.get("type") == "final" or "session_id" in line for line in lines)
