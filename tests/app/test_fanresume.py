"""Resuming a parallel run that was cut short: completed tasks are kept, an interrupted one
continues from its checkpoint (its earlier calls not repeated), one that never started starts.
Scripted model, real tools, real bwrap, real SQLite; the cut is a cancellation at a known point."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.projecttrust import trust_project
from yagent.app import fanrun
from yagent.app.fanout import Assignment, FanoutError
from yagent.cli import main
from yagent.kernel.judge.delegate import Status
from yagent.llm.replay import Recording
from yagent.llm.types import Request

from .test_fanout import GUARD, Gated, finish, opened, scripted, tool, ws

__all__ = ["ws"]  # the fixture, shared

PLAN = [
    Assignment("a", "first", agent="coding", write=("docs",)),
    Assignment("b", "second", agent="coding", write=("src",)),
    Assignment("c", "third", agent="coding", write=("secret",)),
]


async def cut_short(ws: Path, home: Path) -> str:
    """One task at a time: `a` completes, `b` writes a file then hangs, and the run is cancelled
    there (as Ctrl-C twice or a crash would leave it); `c` never starts. The session id."""
    engine = Gated(
        scripted(
            {
                "a": [finish("a", "a is done")],
                "b": [tool("write_file", "b1", path="src/b1.txt", content="once\n"), finish("b")],
            }
        )
    )
    hung = anyio.Event()

    async def hang() -> None:
        hung.set()
        await anyio.sleep_forever()

    engine.before[("b", 1)] = hang
    async with opened(ws, home, engine) as app:
        async with anyio.create_task_group() as tg:
            tg.start_soon(lambda: app.run_parallel(PLAN, max_parallel=1))
            with anyio.fail_after(GUARD):
                await hung.wait()
            tg.cancel_scope.cancel()
        [info] = [s for s in app.store.list_sessions(limit=None) if s.meta.get("parallel")]
    return info.id


class Seen(Gated):
    requests: dict[str, list[Request]]

    async def stream(self, request: Request) -> Any:  # type: ignore[override]
        self.requests.setdefault(self.inner.identity(request), []).append(request)
        async for event in super().stream(request):
            yield event


@pytest.mark.anyio
async def test_a_resumed_parallel_run_redoes_nothing(ws: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    sid = await cut_short(ws, home)
    assert (ws / "src" / "b1.txt").read_text() == "once\n"
    # the second process: `a` has no script left (a call would fail the task), `b` finishes
    engine = Seen(scripted({"b": [finish("b", "b resumed")], "c": [finish("c", "c ran")]}))
    engine.requests = {}
    async with opened(ws, home, engine) as app:
        work = await fanrun.resume_plan(app, sid)
        run = await fanrun.resume_parallel(app, work)
        calls = app.store.tool_calls(sid)
        info = app.store.get_session(sid)
    lines = dict(line.split(": ", 1) for line in work.lines)
    assert lines["a"] == "completed before — kept, not run"
    assert lines["b"].startswith("resume decision: continue the interrupted run")
    assert lines["c"] == "never started — starts now"
    assert run.session_id == sid
    assert [r.status for r in run.receipts] == [Status.COMPLETED] * 3
    assert [r.output for r in run.receipts] == ["a is done", "b resumed", "c ran"]
    assert "a" not in engine.requests  # kept: never asked again
    # b continued its own history: its earlier write is in what the model saw, and not redone
    seen = json.dumps([m.to_dict() for m in engine.requests["b"][0].messages])
    assert "src/b1.txt" in seen
    assert "interrupted" in seen
    assert [c.call_id for c in calls].count("b1") == 1
    assert (ws / "src" / "b1.txt").read_text() == "once\n"
    assert info.status == "finished"


@pytest.mark.anyio
async def test_a_second_resume_keeps_everything(ws: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    sid = await cut_short(ws, home)
    async with opened(ws, home, scripted({"b": [finish("b")], "c": [finish("c")]})) as app:
        await fanrun.resume_parallel(app, await fanrun.resume_plan(app, sid))
    async with opened(ws, home, scripted({})) as app:  # nothing may be asked
        work = await fanrun.resume_plan(app, sid)
        run = await fanrun.resume_parallel(app, work)
    assert all(line.endswith("kept, not run") for line in work.lines)
    assert run.ok


@pytest.mark.anyio
async def test_what_cannot_be_resumed_is_refused(ws: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    async with opened(ws, home, scripted({"coding": [finish("coding")]})) as app:
        plain, _ = await app.run("not parallel", agent_name="coding")
        with pytest.raises(FanoutError, match="not a parallel run"):
            await fanrun.resume_plan(app, plain)
        with pytest.raises(FanoutError, match="no session"):
            await fanrun.resume_plan(app, "ffffffffffff")
    sid = await cut_short(ws, home)
    # a stored plan that no longer holds (edited so two tasks write one area) is re-checked
    with sqlite3.connect(home / "sessions.db") as db:
        (raw,) = db.execute("SELECT meta FROM sessions WHERE id = ?", (sid,)).fetchone()
        meta = json.loads(raw)
        meta["plan"] = [dict(p, write=["src"]) for p in meta["plan"]]
        db.execute("UPDATE sessions SET meta = ? WHERE id = ?", (json.dumps(meta), sid))
    async with opened(ws, home, scripted({})) as app:
        with pytest.raises(FanoutError, match="conflicting worktree"):
            await fanrun.resume_plan(app, sid)
        meta["plan"] = [{"name": "a", "task": 3}]
        with sqlite3.connect(home / "sessions.db") as db:
            db.execute("UPDATE sessions SET meta = ? WHERE id = ?", (json.dumps(meta), sid))
        with pytest.raises(FanoutError, match="stored plan is unreadable"):
            await fanrun.resume_plan(app, sid)


def test_yagent_resume_continues_a_parallel_session(
    ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / "home"
    sid = anyio.run(cut_short, ws, home)
    recording = Recording()
    recording.add("b", finish("b", "b via cli"))
    recording.add("c", finish("c", "c via cli"))
    rec = tmp_path / "rec.json"
    recording.save(rec)
    monkeypatch.setenv("YAGENT_HOME", str(home))
    monkeypatch.chdir(ws)
    status = main(["resume", sid[:12], "--json", "-y", "--replay", str(rec)])
    out = capsys.readouterr()
    lines = [json.loads(line) for line in out.out.splitlines() if line.strip()]
    assert status == 0
    notices = [line["text"] for line in lines if line["type"] == "notice"]
    assert any(n.startswith("resume: a: completed before") for n in notices)
    assert [line["status"] for line in lines if line["type"] == "receipt"] == ["completed"] * 3
    assert lines[-2] == {"type": "fanout", "session_id": sid, "ok": True}
    assert "resuming parallel session" in out.err


@pytest.mark.anyio
async def test_a_task_failed_by_a_model_error_continues_one_out_of_steps_is_kept(
    ws: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    engine = Gated(
        scripted(
            {
                "flaky": [tool("write_file", "f1", path="docs/f.txt", content="f\n"), finish("x")],
                "spent": [tool("list_dir", f"s{i}", path="src") for i in range(3)],
            }
        )
    )

    async def explode() -> None:
        raise RuntimeError("the model fell over")

    engine.before[("flaky", 1)] = explode
    (ws / ".yagent").mkdir()
    (ws / ".yagent" / "config.toml").write_text(
        "[llm]\nstep_retries = 0\n\n[agents.lister]\nprompt = 'List.'\n"
        "tools = ['list_dir', 'agent_exit']\nmax_steps = 2\n"
    )
    trust_project(home, ws)  # [llm] and [agents.*] from a repository apply once trusted
    plan = [
        Assignment("flaky", "one", agent="coding", write=("docs",)),
        Assignment("spent", "two", agent="lister", write=("src",)),
    ]
    async with opened(ws, home, engine) as app:
        first = await app.run_parallel(plan)
    assert [r.status for r in first.receipts] == [Status.FAILED, Status.FAILED]
    engine2 = Seen(scripted({"flaky": [finish("flaky", "flaky recovered")]}))
    engine2.requests = {}
    async with opened(ws, home, engine2) as app:
        work = await fanrun.resume_plan(app, first.session_id)
        run = await fanrun.resume_parallel(app, work)
    lines = dict(line.split(": ", 1) for line in work.lines)
    assert lines["flaky"].startswith("failed before; resume decision: continue")
    assert lines["spent"] == "failed before, its run concluded — kept, not run"
    assert "spent" not in engine2.requests
    assert [r.status for r in run.receipts] == [Status.COMPLETED, Status.FAILED]
    assert run.receipts[0].output == "flaky recovered"
    assert run.tasks[1] == first.tasks[1]  # the kept receipt, as recorded


def test_a_parallel_session_replays_and_saves_per_task(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / "home"
    fresh = tmp_path / "fresh"
    for root in (tmp_path / "orig", fresh):
        for d in (".git", "docs", "src"):
            (root / d).mkdir(parents=True)
    plan = [
        Assignment("a", "first", agent="coding", write=("docs",)),
        Assignment("b", "second", agent="coding", write=("src",)),
    ]
    engine = scripted(
        {
            "a": [tool("write_file", "a1", path="docs/a.md", content="a\n"), finish("a", "A")],
            "b": [tool("run_bash", "b1", command="echo b > src/b.txt"), finish("b", "B")],
        }
    )

    async def original() -> str:
        async with opened(tmp_path / "orig", home, engine) as app:
            return (await app.run_parallel(plan)).session_id

    sid = anyio.run(original)
    monkeypatch.setenv("YAGENT_HOME", str(home))
    saved = tmp_path / "rec.json"
    assert main(["replay", sid[:12], "--save", str(saved)]) == 0
    recording = Recording.load(saved)
    assert sorted(recording.agents) == ["a", "b"]
    assert [len(steps) for _, steps in sorted(recording.agents.items())] == [2, 2]
    monkeypatch.chdir(fresh)
    capsys.readouterr()
    assert main(["replay", sid[:12], "-y"]) == 0  # the stored plan, against the recording
    assert (fresh / "docs" / "a.md").read_text() == "a\n"
    assert (fresh / "src" / "b.txt").read_text() == "b\n"
    assert "2 of 2 tasks completed" in capsys.readouterr().out
