"""Parallel sub-agents confined to declared worktrees: scripted model, real tools, real bwrap,
real SQLite store. Overlap is proven with events each task waits for, never with timings."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.projecttrust import trust_project
from yagent.app import fanrun, lane
from yagent.app.assemble import App, open_app
from yagent.app.config import load
from yagent.app.fanout import Assignment, FanoutError
from yagent.app.lanemarkers import marker
from yagent.app.telemetry import project
from yagent.kernel.judge.delegate import Status
from yagent.llm.scripted import ScriptedEngine, Step, call
from yagent.llm.types import Request, StreamEvent
from yagent.messaging import Event
from yagent.tools.yolo import Yolo

pytestmark = pytest.mark.anyio
GUARD = 20.0  # seconds a rendezvous may take before the test fails (a hang guard, not a timing)
Hook = Callable[[], Awaitable[None]]


@dataclass
class Gated:
    """A scripted engine whose identities can wait (or fail) before their n-th answer."""

    inner: ScriptedEngine
    before: dict[tuple[str, int], Hook] = field(default_factory=dict)
    seen: dict[str, int] = field(default_factory=dict)

    @property
    def model(self) -> str:
        return self.inner.model

    async def stream(self, request: Request) -> AsyncIterator[StreamEvent]:
        ident = self.inner.identity(request)
        n = self.seen.get(ident, 0)
        self.seen[ident] = n + 1
        hook = self.before.get((ident, n))
        if hook is not None:
            await hook()
        async for event in self.inner.stream(request):
            yield event


def scripted(scripts: dict[str, list[Step]]) -> ScriptedEngine:
    return ScriptedEngine(scripts, markers={name: marker(name) for name in scripts})


def finish(name: str, text: str = "done") -> Step:
    return call("agent_exit", json.dumps({"reason": text, "summary": text}), call_id=f"{name}-x")


def tool(name: str, cid: str, **args: Any) -> Step:
    return call(name, json.dumps(args), call_id=cid)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    for d in (".git", "docs", "src", "secret"):
        (root / d).mkdir(parents=True)
    (root / "README.md").write_text("# project\n")
    (root / "src" / "app.py").write_text("print('app')\n")
    (root / "secret" / "key.txt").write_text("hunter2\n")
    return root


@asynccontextmanager
async def opened(ws: Path, home: Path, engine: Any) -> AsyncIterator[App]:
    async with open_app(
        load(home=home, workspace=ws),
        home=home,
        workspace=ws,
        yolo=Yolo.YOLO,  # -y: nobody is asked; the worktree ring still denies
        interactive=False,
        engine=engine,
    ) as app:
        yield app


def rendezvous(engine: Gated, a: str, b: str) -> None:
    """Each of `a` and `b` answers its first request only once the other has asked too: a serial
    run can never get there (the first waits for a task that has not started)."""
    arrived = {a: anyio.Event(), b: anyio.Event()}

    def meet(me: str, other: str) -> Hook:
        async def hook() -> None:
            arrived[me].set()
            with anyio.fail_after(GUARD):
                await arrived[other].wait()

        return hook

    engine.before[(a, 0)] = meet(a, b)
    engine.before[(b, 0)] = meet(b, a)


def calls_of(app: App, session_id: str) -> dict[str, Any]:
    return {c.call_id: c for c in app.store.tool_calls(session_id)}


async def test_tasks_run_at_once_each_confined_to_its_worktree(ws: Path, tmp_path: Path) -> None:
    engine = Gated(
        scripted(
            {
                "docs": [
                    tool("write_file", "d1", path="docs/usage.md", content="usage\n"),
                    tool("write_file", "d2", path="src/evil.py", content="x\n"),
                    tool("read_file", "d3", path="src/app.py"),
                    tool("run_bash", "d4", command="echo x > src/other.txt"),
                    tool("run_bash", "d5", command="echo ok > docs/shell.txt"),
                    finish("docs", "docs updated"),
                ],
                "code": [
                    tool("write_file", "c1", path="src/new.py", content="new\n"),
                    tool("read_file", "c2", path="README.md"),
                    tool(
                        "search_replace_in_file",
                        "c3",
                        path="README.md",
                        old_string="#",
                        new_string="##",
                    ),
                    tool("read_file", "c4", path="secret/key.txt"),
                    tool("list_dir", "c5"),
                    finish("code", "code written"),
                ],
            }
        )
    )
    rendezvous(engine, "docs", "code")
    plan = [
        Assignment("docs", "Update the docs", agent="coding", write=("docs",), read=("src",)),
        Assignment(
            "code",
            "Write the code",
            capabilities=("write", "exec"),
            write=("src",),
            read=("README.md",),
        ),
    ]
    async with opened(ws, tmp_path / "home", engine) as app:
        run = await app.run_parallel(plan)
        calls = calls_of(app, run.session_id)
        events = app.store.events(run.session_id)
        sessions = app.store.list_sessions(limit=None)

    assert [t.name for t in run.tasks] == ["docs", "code"]
    assert [r.status for r in run.receipts] == [Status.COMPLETED, Status.COMPLETED]
    assert run.ok
    assert run.receipts[0].output == "docs updated"
    assert run.receipts[1].executor == "coding"  # least capable with write+exec, ties by name
    assert [s.id for s in sessions] == [run.session_id]
    # file tools: inside the areas they work, outside they are denied by the worktree ring
    assert (ws / "docs" / "usage.md").read_text() == "usage\n"
    assert (ws / "src" / "new.py").read_text() == "new\n"
    assert not (ws / "src" / "evil.py").exists()
    for denied in ("d2", "c3", "c4", "c5"):
        assert calls[denied].ok is False
        assert "worktree" in str(calls[denied].content)
    assert "read-only" in str(calls["c3"].content)
    assert "outside its areas" in str(calls["c4"].content)
    assert (ws / "README.md").read_text() == "# project\n"
    assert calls["d3"].ok
    assert calls["c2"].ok
    # shell: bwrap keeps the workspace read-only except the task's writable areas
    assert not (ws / "src" / "other.txt").exists()
    assert "Read-only file system" in str(calls["d4"].content)
    assert (ws / "docs" / "shell.txt").read_text() == "ok\n"
    # every event, call and message carries the task's delegation id
    ids = {t.name: t.delegation_id for t in run.tasks}
    assert ids["docs"].startswith("docs@")
    assert ids["code"].startswith("code@")
    assert {c.call_id: c.delegation_id for c in calls.values()}["d1"] == ids["docs"]
    assert {c.delegation_id for c in calls.values()} == set(ids.values())
    starts = [e for e in events if e.type == "delegation_start"]
    assert sorted(e.delegation_id for e in starts) == sorted(ids.values())
    ends = [e for e in events if e.type == "run_end"]
    assert ends[-1].delegation_id == ""
    assert ends[-1].payload["status"] == "finished"
    assert [r["status"] for r in ends[-1].payload["receipts"]] == ["completed", "completed"]


async def test_the_trajectory_shows_one_turn_with_a_span_per_task(ws: Path, tmp_path: Path) -> None:
    engine = scripted({"a": [finish("a")], "b": [finish("b")]})
    plan = [
        Assignment("a", "one", agent="chat", write=("docs",)),
        Assignment("b", "two", agent="chat", write=("src",)),
    ]
    async with opened(ws, tmp_path / "home", engine) as app:
        run = await fanrun.run_parallel(app, plan)
        projection = project(app.store.events(run.session_id))
    assert len(projection.turns) == 1
    turn = projection.turns[0]
    assert turn.closed
    spans = [r for r in turn.rows if r.kind.value == "span"]
    assert sorted(r.scope for r in spans) == sorted(t.delegation_id for t in run.tasks)
    assert all(r.ok for r in spans)


async def test_a_failing_task_does_not_cancel_the_others(ws: Path, tmp_path: Path) -> None:
    engine = Gated(scripted({"bad": [finish("bad")], "slow": [finish("slow", "slow is done")]}))
    bad_ended = anyio.Event()

    async def explode() -> None:
        raise RuntimeError("the model fell over")

    async def wait_for_bad() -> None:
        with anyio.fail_after(GUARD):
            await bad_ended.wait()  # answers only after the other task has failed

    engine.before[("bad", 0)] = explode
    engine.before[("slow", 0)] = wait_for_bad
    plan = [
        Assignment("bad", "fails", agent="coding", write=("docs",)),
        Assignment("slow", "waits", agent="coding", write=("src",)),
    ]
    async with opened(ws, tmp_path / "home", engine) as app:

        def watch(event: Event) -> None:
            if event.type == "run_end" and event.delegation_id.startswith("bad@"):
                bad_ended.set()

        app.observers.append(watch)
        run = await app.run_parallel(plan)
        info = app.store.get_session(run.session_id)
        ends = [e for e in app.store.events(run.session_id) if e.type == "run_end"]
    bad, slow = run.tasks
    assert bad.receipt.status is Status.FAILED
    assert "the model fell over" in bad.receipt.reason
    assert slow.receipt.status is Status.COMPLETED
    assert slow.receipt.output == "slow is done"
    assert not run.ok
    assert info.status == "failed"
    assert ends[-1].payload["status"] == "error"
    assert "bad (failed)" in ends[-1].payload["error"]


async def test_an_unfinished_run_is_a_failed_receipt_and_the_cap_holds(
    ws: Path, tmp_path: Path
) -> None:
    engine = scripted(
        {"one": [finish("one")], "two": [call("think", json.dumps({"thought": "hm"}))]}
    )
    active: set[str] = set()
    most = 0

    def watch(event: Event) -> None:
        nonlocal most
        if event.type == "delegation_start":
            active.add(event.delegation_id)
            most = max(most, len(active))
        elif event.type == "run_end" and event.delegation_id:
            active.discard(event.delegation_id)

    plan = [
        Assignment("one", "a", agent="chat", write=("docs",)),
        Assignment("two", "b", agent="chat", write=("src",)),
    ]
    async with opened(ws, tmp_path / "home", engine) as app:
        app.observers.append(watch)
        run = await app.run_parallel(plan, max_parallel=1)
    assert most == 1
    one, two = run.tasks
    assert one.receipt.ok
    assert two.receipt.status is Status.FAILED
    assert two.run_status == "error"
    assert two.receipt.reason.startswith("Unfinished: the run ended error")


@dataclass(frozen=True)
class Bad:
    plan: list[Assignment]
    says: tuple[str, ...]


def _a(name: str, **kw: Any) -> Assignment:
    kw.setdefault("agent", "coding")
    return Assignment(name, f"task {name}", **kw)


REFUSED = {
    "overlap": Bad(
        [_a("docs", write=("docs",)), _a("deep", write=("docs/sub",))],
        ("'deep' writes 'docs/sub'", "'docs' writes 'docs'"),
    ),
    "same-area": Bad([_a("x", write=("src",)), _a("y", write=("./src/",))], ("'x'", "'y'")),
    "read-and-write": Bad(
        [_a("x", write=("src",), read=("src/app.py",))], ("'x'", "src/app.py", "read-only")
    ),
    "wildcard": Bad([_a("x", write=("src/*",))], ("'x'", "wildcard")),
    "climbs": Bad([_a("x", read=("../up",))], ("'x'", "'..'")),
    "absolute": Bad([_a("x", write=("/etc",))], ("'x'", "absolute")),
    "unknown-agent": Bad([_a("x", agent="wizard", write=("src",))], ("'x'", "wizard")),
    "nobody-can": Bad(
        [Assignment("x", "t", capabilities=("teleport",), write=("src",))], ("'x'", "teleport")
    ),
    "both": Bad([_a("x", capabilities=("write",))], ("'x'", "either an agent")),
    "neither": Bad([Assignment("x", "t", write=("src",))], ("'x'", "either an agent")),
    "twice": Bad([_a("x", write=("a",)), _a("x", write=("b",))], ("named 'x'",)),
    "bad-name": Bad([_a("x y", write=("a",))], ("'x y'", "plain word")),
    "no-text": Bad([Assignment("x", " ", agent="coding")], ("'x'", "no task text")),
    "empty": Bad([], ("at least one task",)),
    "file-mid-path": Bad([_a("x", write=("README.md/sub",))], ("'x'", "not a directory")),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
async def test_a_plan_that_does_not_hold_is_refused_before_any_session(
    case: str, ws: Path, tmp_path: Path
) -> None:
    bad = REFUSED[case]
    engine = scripted({a.name: [finish(a.name)] for a in bad.plan if " " not in a.name})
    async with opened(ws, tmp_path / "home", engine) as app:
        with pytest.raises(FanoutError) as caught:
            await app.run_parallel(bad.plan)
        assert app.store.list_sessions(limit=None) == []
    assert engine.requests == []
    for text in bad.says:
        assert text in str(caught.value)
    assert not (ws / "docs" / "sub").exists()  # nothing prepared for a refused plan


async def test_a_writable_area_through_a_symbolic_link_is_refused(ws: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (ws / "link").symlink_to(outside)
    async with opened(ws, tmp_path / "home", scripted({"x": [finish("x")]})) as app:
        with pytest.raises(FanoutError, match="symbolic link 'link'"):
            await app.run_parallel([_a("x", write=("link/new",))])
        assert app.store.list_sessions(limit=None) == []
    assert not (outside / "new").exists()


async def test_run_parallel_refuses_under_a_preset_that_runs_commands_on_the_host(
    ws: Path, tmp_path: Path
) -> None:
    (ws / ".yagent").mkdir()
    (ws / ".yagent" / "config.toml").write_text('[agent]\npreset = "yolo"\n')
    trust_project(tmp_path / "home", ws)  # a looser preset from the repository needs trust
    async with opened(ws, tmp_path / "home", scripted({"x": [finish("x")]})) as app:
        with pytest.raises(FanoutError, match="preset 'yolo' runs shell commands on the host"):
            await app.run_parallel([_a("x", write=("src",))])
        assert app.store.list_sessions(limit=None) == []


async def test_a_missing_writable_area_is_created_as_a_directory(ws: Path, tmp_path: Path) -> None:
    engine = scripted(
        {"x": [tool("run_bash", "x1", command="echo hi > build/out/log.txt"), finish("x")]}
    )
    async with opened(ws, tmp_path / "home", engine) as app:
        run = await app.run_parallel([_a("x", write=("build/out",))])
        calls = calls_of(app, run.session_id)
    assert run.ok
    assert calls["x1"].ok
    assert (ws / "build" / "out" / "log.txt").read_text() == "hi\n"


async def test_the_lane_marks_the_first_prompt_line_and_states_the_areas() -> None:
    from yagent.agents import catalog
    from yagent.kernel.judge import areas
    from yagent.tools.commands import CommandGate

    agent = catalog.builtin("coding", 0)
    gate: CommandGate = object.__new__(CommandGate)  # the frame never touches the gate
    decl = areas.Declaration.of("docs", writable=["docs"], read_only=["src"])
    framed = lane.framed(lane.Lane("docs", "docs@1", decl, gate), agent)
    assert framed.marker == f"{agent.marker} {marker('docs')}"
    assert "write: docs; read: src" in framed.prompt
    assert lane.framed(None, agent) is agent


@pytest.fixture(autouse=True)
def _no_env_overrides(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("YAGENT_PROVIDER", "YAGENT_MODEL", "YAGENT_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
