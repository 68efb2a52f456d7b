"""C6 / C7 / C14 / C15: the per-workspace blueprint — findings folded only when backed by evidence,
the fold only warns, its account travels beside the deliverable, the view is read fresh.
Real fan-out lanes of the Repo agent (scripted model, real tools, real stores)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.app.test_fanout import opened, scripted, tool
from yagent.agents import catalog
from yagent.app import blueprint
from yagent.app.blueprint import NO_SUBMISSION, fold, fold_delegation, view
from yagent.app.evidence import Evidence
from yagent.app.fanout import Assignment
from yagent.llm.scripted import ScriptedEngine, call, say

pytestmark = pytest.mark.anyio

FINDINGS = {
    "findings": [
        {"title": "entry point", "detail": "run() prints", "files": ["src/app.py"]},
        {"title": "made up", "detail": "never read", "files": ["src/nowhere.py"]},
        {"title": "half read", "files": ["src/app.py", "src/other.py"]},
        {"title": "no files", "detail": "x"},
    ]
}


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / ".git").mkdir(parents=True)
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("def run():\n    print('app')\n")
    (root / "src" / "other.py").write_text("x = 1\n")
    return root


def exit_with(summary: str, offered: object) -> object:
    args = {"reason": "analysed", "summary": summary, "blueprint": offered}
    return call("agent_exit", json.dumps(args), call_id="r-exit")


async def test_c15_backed_findings_fold_and_the_account_stays_beside_the_deliverable(
    ws: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    engine = scripted(
        {"look": [tool("read_file", "r1", path="src/app.py"), exit_with("REPORT", FINDINGS)]}
    )
    plan = [Assignment("look", "Map the code", agent="repo", read=("src",))]
    async with opened(ws, home, engine) as app:
        run = await app.run_parallel(plan)
        (task,) = run.tasks
        account = fold_delegation(home, app.store, run.session_id, task.delegation_id)

    assert account.folded == ("entry point",)
    assert dict(account.dropped) == {
        "made up": "files not in the evidence set: src/nowhere.py",
        "half read": "files not in the evidence set: src/other.py",
        "no files": "names no files",
    }
    # the deliverable is exactly what the agent submitted: the account is not inside it
    assert task.receipt.output == "REPORT"
    line = account.line()
    assert line.startswith("[blueprint] folded 1: entry point")
    assert "made up" in line
    assert "REPORT" not in line
    shown = view(home, ws)
    assert "entry point" in shown
    assert "src/app.py" in shown
    assert "made up" not in shown


async def test_c14_a_run_that_did_not_submit_folds_nothing_and_says_so(
    ws: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    engine = scripted(
        {"look": [tool("read_file", "r1", path="src/app.py"), say("report"), say("report")]}
    )
    plan = [Assignment("look", "Map the code", agent="repo", read=("src",))]
    async with opened(ws, home, engine) as app:
        run = await app.run_parallel(plan)
        account = fold_delegation(home, app.store, run.session_id, run.tasks[0].delegation_id)
    assert run.tasks[0].run_status == "answered"
    assert account.warnings == (NO_SUBMISSION,)
    assert account.folded == ()
    assert not blueprint.path_for(home, ws).exists()
    assert view(home, ws) == ""


def test_c7_the_fold_only_warns(tmp_path: Path, ws: Path) -> None:
    home = tmp_path / "home"
    evidence = Evidence(("src/app.py",), True)
    path = blueprint.path_for(home, ws)
    path.parent.mkdir(parents=True)
    path.write_text("{damaged")
    account = fold(home, ws, FINDINGS, evidence)  # no exception
    assert account.folded == ()
    assert "not written" in account.warnings[0]
    assert path.read_text() == "{damaged"  # never written over
    assert "blueprint unavailable" in view(home, ws)
    # a store that cannot be read at all: a warning, not an error
    gone = fold_delegation(home, _ClosedStore(), "nope", "")  # type: ignore[arg-type]
    assert gone.warnings[0].startswith("not folded")
    assert fold(home, ws, "not a list", evidence).warnings


class _ClosedStore:
    def tool_calls(self, *_: object, **__: object) -> object:
        raise RuntimeError("store closed")


def test_c6_the_view_is_read_fresh_and_cut_visibly(
    tmp_path: Path, ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    evidence = Evidence(("src/app.py", "src/other.py"), True)
    fold(home, ws, [{"title": "one", "files": ["src/app.py"]}], evidence)
    assert "one" in view(home, ws)
    fold(home, ws, [{"title": "two", "files": ["./src/other.py"]}], evidence)
    fresh = view(home, ws)
    assert "one" in fresh
    assert "two — files: src/other.py" in fresh
    fold(home, ws, [{"title": "one", "detail": "again", "files": ["src/app.py"]}], evidence)
    assert view(home, ws).count("- one") == 1  # the same title replaces the older finding
    monkeypatch.setattr(blueprint, "VIEW_MAX_BYTES", 40)
    assert "[blueprint cut at 40 bytes" in view(home, ws)


async def test_c6_the_cold_tool_loader_sees_the_blueprint(ws: Path, tmp_path: Path) -> None:
    """A real run's `load_tool` result carries the blueprint view as stored at that call."""
    home = tmp_path / "home"
    backed = Evidence(("src/app.py",), True)
    fold(home, ws, [{"title": "entry point", "files": ["src/app.py"]}], backed)
    engine = ScriptedEngine(
        {
            "coding": [
                tool("load_tool", "l1", names=["browser_eval"]),
                call("agent_exit", json.dumps({"reason": "r", "summary": "s"}), call_id="x"),
            ]
        },
        markers={"coding": catalog.coding(0).marker},
    )
    async with opened(ws, home, engine) as app:
        sid, _ = await app.run("look", agent_name="coding")
        calls = {c.call_id: c for c in app.store.tool_calls(sid)}
    assert "entry point" in json.loads(str(calls["l1"].content))["blueprint"]
