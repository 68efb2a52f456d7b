"""C16 / G16: evidence sets — argument paths ∪ result paths of a delegation's successful calls, as
each tool's Spec declares them; fewer rather than false; nothing unless the run ended through
`agent_exit`. Real fan-out lanes (scripted model, real tools, real SQLite store)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.app.test_fanout import finish, opened, scripted, tool
from yagent.app.evidence import collect, evidence_for
from yagent.app.fanout import Assignment
from yagent.llm.scripted import say
from yagent.memory import SessionStore

pytestmark = pytest.mark.anyio


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / ".git").mkdir(parents=True)
    (root / "src").mkdir()
    (root / "docs").mkdir()
    (root / "src" / "app.py").write_text("def run():\n    print('app')\n")
    (root / "src" / "util.py").write_text("def helper():\n    print('util')\n")
    (root / "src" / "other.py").write_text("x = 1\n")
    (root / "README.md").write_text("# project\n")
    return root


async def test_c16_evidence_is_argument_and_result_paths_of_a_submitted_run(
    ws: Path, tmp_path: Path
) -> None:
    engine = scripted(
        {
            "look": [
                tool("read_file", "l1", path="src/app.py"),
                tool("search", "l2", pattern="print", path="src"),  # finds app.py and util.py
                tool("list_dir", "l3", path="src"),  # bare names: never evidence
                tool("print_dir_tree", "l4", path="."),
                tool("read_file", "l5", path="src/gone.py"),  # failed: not evidence
                tool("think", "l6", thought="src/other.py looks unrelated"),  # no declaration
                finish("look", "looked"),
            ],
            "chat": [
                tool("read_file", "c1", path="README.md"),
                say("the readme is short"),
                say("the readme is short"),
                say("the readme is short"),
            ],
        }
    )
    plan = [
        Assignment("look", "Look at the code", agent="repo", read=("src",)),
        Assignment("chat", "Read the readme", agent="coding", write=("docs",), read=("README.md",)),
    ]
    async with opened(ws, tmp_path / "home", engine) as app:
        run = await app.run_parallel(plan)
        by_name = {t.name: t for t in run.tasks}
        look = evidence_for(app.store, run.session_id, by_name["look"].delegation_id)
        chat = evidence_for(app.store, run.session_id, by_name["chat"].delegation_id)
        top = evidence_for(app.store, run.session_id, "")

    assert by_name["look"].run_status == "finished"
    assert look.submitted
    assert look.files == ("src/app.py", "src/util.py")
    assert "src/app.py" in look
    assert "./src/util.py" in look
    assert "src/other.py" not in look
    assert ("src/gone.py", "does not exist") not in look.left_out  # a failed call names nothing
    # answered in plain text: nothing submitted, nothing collected
    assert by_name["chat"].run_status == "answered"
    assert (chat.files, chat.submitted) == ((), False)
    # the parallel run's own top level made no calls: it has nothing to show
    assert top.files == ()


async def test_g16_paths_outside_or_missing_are_left_out_visibly(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "a.py").write_text("a\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("s\n")
    (ws / "src" / "link.txt").symlink_to(outside / "secret.txt")
    with SessionStore(tmp_path / "sessions.db") as store:
        sid = store.create_session(workspace=str(ws)).id

        def record(cid: str, name: str, args: dict[str, object], result: str, ok: bool) -> None:
            store.record_tool_call(
                sid, call_id=cid, name=name, arguments=json.dumps(args), started_at=1.0
            )
            store.record_tool_result(sid, cid, content=result, ok=ok, kind=None, ended_at=2.0)

        record("1", "read_file", {"path": "src/a.py"}, json.dumps({"path": "src/a.py"}), True)
        record("2", "read_file", {"path": "src/link.txt"}, "{}", True)
        record("3", "read_file", {"path": str(outside / "secret.txt")}, "not json", True)
        record("4", "write_file", {"path": "src/deleted.py"}, "{}", True)
        record("5", "mcp__thing", {"path": "src/a.py"}, "{}", True)
        record("6", "search", {"path": "src"}, json.dumps({"matches": [{"path": "src"}]}), True)
        evidence = collect(ws, store.tool_calls(sid))
        # a run that never ended: nothing at all
        assert not evidence_for(store, sid, "").submitted
        store.append_event(sid, "run_end", {"status": "max_steps"})
        assert evidence_for(store, sid, "").files == ()
        store.append_event(sid, "run_end", {"status": "finished"})
        # the calls above started before the previous run ended: not this run's evidence
        assert evidence_for(store, sid, "").files == ()

    assert evidence.files == ("src/a.py",)
    assert dict(evidence.left_out) == {
        "src/link.txt": "outside the workspace",
        str(outside / "secret.txt"): "outside the workspace",
        "src/deleted.py": "does not exist",
        "src": "not a file",
    }
