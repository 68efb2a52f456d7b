"""The delegations of a parallel run as a live tree, in a real pty: `yagent fanout` with two tasks
against a scripted server that holds one task's model request (a rendezvous): the tree shows the
other completed and this one running with its elapsed time; released, the held one fails and the
final tree is printed for good. Rows and their nesting: `Delegations` with a fake clock."""

from __future__ import annotations

from pathlib import Path

from tests.cli.ptyterm import Term, configure
from tests.cli.test_robustness import tool_reply
from tests.llm.wire import Reply, WireServer, text_frames
from yagent.cli.tree import Delegations
from yagent.messaging import Event

PLAN = """
[[task]]
name = "alpha"
agent = "coding"
task = "do alpha"
write = ["docs"]

[[task]]
name = "beta"
agent = "coding"
task = "do beta"
write = ["src"]
"""
EXIT = tool_reply("x", "agent_exit", {"reason": "done", "summary": "done"})


def test_a_fanout_shows_its_delegations_as_a_live_tree(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    for folder in (".git", "docs", "src"):
        (ws / folder).mkdir(parents=True)
    plan = tmp_path / "plan.toml"
    plan.write_text(PLAN)
    held = Reply(events=text_frames("thinking"), hang_after=2)  # streams, then waits
    with WireServer([held, EXIT, EXIT, EXIT]) as server:
        configure(tmp_path / "home", server.url)
        term = Term(tmp_path / "home", ws, ("fanout", str(plan), "-y"), cols=100)
        try:
            term.wait_for("delegations · 2 · 1 running")  # one done, one held by the server
            term.wait_for("completed")
            term.wait_for("running")
            server.release.set()
            term.wait_for("delegations · 2 · 0 running")
            term.finish()
        finally:
            term.close()
    final = term.text[term.text.rindex("delegations · 2 · 0 running") :].splitlines()[:3]
    rows = sorted(final[1:])
    assert rows[0].startswith(("├─ ", "└─ "))
    assert any("✓" in row and "(coding) completed" in row for row in rows), final
    assert any("✗" in row and "(coding) failed" in row for row in rows), final


def event(kind: str, lane: str, **payload: object) -> Event:
    return Event(kind, {"delegation_id": lane, **payload}, lane)


def test_rows_nest_under_their_parent_and_stop_their_clock_at_the_receipt() -> None:
    now = [100.0]
    tree = Delegations(lambda: now[0])
    assert not tree.update(event("tool_call", "ghost@s"))  # no start seen: not the tree's
    tree.update(event("delegation_start", "a@s", name="a", agent="coding"))
    tree.update(
        event("delegation_start", "b@s", name="b", agent="repo", parent_delegation_id="a@s")
    )
    now[0] = 103.0
    tree.update(event("tool_call", "b@s", name="grep", arguments='{"pattern": "TODO"}'))
    tree.update(
        event("delegation_receipt", "b@s", receipt={"status": "failed", "reason": "no luck"})
    )
    now[0] = 110.0
    shown = [line.plain for line in tree.lines(80)]
    assert shown == [
        "delegations · 2 · 1 running",
        "└─ ● a (coding) running 10s · started",
        "   └─ ✗ b (repo) failed 3s · no luck",
    ]
    narrow = [line.plain for line in tree.lines(20)]
    assert all(len(line) <= 20 for line in narrow)
    assert narrow[1].endswith("…")
