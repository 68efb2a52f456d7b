"""The Director's delegations, in process: scripted model routed by agent identity, real tools,
real bwrap, real SQLite stores and board. Concurrency is proven with rendezvous, never timings.
Test names carry the spec 002 constraint they prove (`docs/agents.md`)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.app.test_fanout import GUARD, Gated, Hook, finish, rendezvous, tool
from yagent.app import delegation, delegationpool
from yagent.app.assemble import App, open_app
from yagent.app.config import ConfigError, load
from yagent.app.lanemarkers import delegation_marker
from yagent.kernel.durable import taskboard
from yagent.llm.scripted import ScriptedEngine, Step, say
from yagent.llm.scripted import calls as many
from yagent.tools.adapter import ToolContext
from yagent.tools.delegate import NotWiredError
from yagent.tools.delegate import delegate as delegate_tool
from yagent.tools.yolo import Yolo
from yagent.toolspec.delegate import DelegateArgs

pytestmark = pytest.mark.anyio
DIRECTOR = "Director agent:"


def engine(scripts: dict[str, list[Step]]) -> Gated:
    """Scripts keyed by "director" or a delegation's name (`<agent>.<call id>`)."""
    markers = {n: DIRECTOR if n == "director" else delegation_marker(n) for n in scripts}
    return Gated(ScriptedEngine(scripts, markers=markers))


def delegates(*calls: tuple[str, str, dict[str, Any]]) -> Step:
    """One director step with several delegate calls: (call id, agent, extra args)."""
    items = [
        ("delegate", json.dumps({"agent": agent, "task": f"task {cid}", **extra}), cid)
        for cid, agent, extra in calls
    ]
    return many(items)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    for d in (".git", "a", "b", "src"):
        (root / d).mkdir(parents=True)
    (root / "README.md").write_text("# project\n")
    return root


@asynccontextmanager
async def opened(ws: Path, home: Path, gated: Gated, config: str = "") -> AsyncIterator[App]:
    home.mkdir(parents=True, exist_ok=True)  # noqa: ASYNC240 (set-up, before anything runs)
    (home / "config.toml").write_text(config)
    async with open_app(
        load(home=home, workspace=ws),
        home=home,
        workspace=ws,
        yolo=Yolo.YOLO,
        interactive=False,
        engine=gated,
    ) as app:
        yield app


def receipts(app: App, session_id: str) -> dict[str, dict[str, Any]]:
    found = {}
    for event in app.store.events(session_id, types=delegation.RECEIPT_EVENT):
        found[event.payload["receipt"]["call_id"]] = event.payload["receipt"]
    return found


def results(app: App, session_id: str) -> dict[str, str]:
    return {
        c.call_id: json.loads(str(c.content))
        for c in app.store.tool_calls(session_id, delegation_id="")
        if c.name == "delegate"
    }


@pytest.mark.parametrize(
    ("value", "env", "size"),
    [
        (1, {}, 1),
        (0, {}, 2),
        (-3, {}, 2),
        (2, {}, 2),
        (5, {}, 5),
        (8, {}, 8),
        (9, {}, 8),
        (100, {}, 8),
        (5, {"YAGENT_CONCURRENCY": "0"}, 1),
        (0, {"YAGENT_CONCURRENCY": "0"}, 1),
        (9, {"YAGENT_CONCURRENCY": "0"}, 1),
        (5, {"YAGENT_CONCURRENCY": "3"}, 5),
    ],
)
def test_c10_pool_normaliser(value: int, env: dict[str, str], size: int) -> None:
    assert delegationpool.normalise(value, env) == size


async def test_c1_the_director_is_an_agent_with_one_extra_tool(ws: Path, tmp_path: Path) -> None:
    async with opened(ws, tmp_path / "home", engine({})) as app:
        director = app.surface(app.agent("director"))
        coding = app.surface(app.agent("coding"))
        assert app.agent("director").marker.startswith("You are yagent's Director agent")
        names = {s.name for s in director.specs()}
        assert "delegate" in names
        assert not names & {"write_file", "run_bash", "search_replace_in_file"}
        assert "delegate" not in {s.name for s in coding.specs()}
        # the one parallel predicate admits delegate calls (not read-only, but concurrent)
        assert director.is_parallelizable("delegate")


async def test_c4_without_a_runner_delegate_is_refused_as_not_wired(
    ws: Path, tmp_path: Path
) -> None:
    async with opened(ws, tmp_path / "home", engine({})) as app:
        ctx = ToolContext(ws, app.surface(app.agent("director")))
        with pytest.raises(NotWiredError, match="not wired"):
            await delegate_tool(ctx, DelegateArgs(agent="coding", task="x"))


async def test_c10_pool_of_two_runs_two_delegations_at_once_and_never_three(
    ws: Path, tmp_path: Path
) -> None:
    gated = engine(
        {
            "director": [
                delegates(
                    ("d1", "coding", {"write": ["a"]}),
                    ("d2", "coding", {"write": ["b"]}),
                    ("d3", "repo", {}),
                ),
                finish("director"),
            ],
            "coding.d1": [tool("write_file", "w1", path="a/x.txt", content="1\n"), finish("d1")],
            "coding.d2": [tool("write_file", "w2", path="b/x.txt", content="2\n"), finish("d2")],
            "repo.d3": [finish("d3", "found it")],
        }
    )
    rendezvous(gated, "coding.d1", "coding.d2")
    config = "[agent]\nmax_parallel_delegations = 2\n"
    async with opened(ws, tmp_path / "home", gated, config) as app:
        sid, result = await app.run("plan it", agent_name="director")
        got = receipts(app, sid)
        events = app.store.events(sid)
        texts = results(app, sid)
    assert result.status.value == "finished"
    assert [got[c]["status"] for c in ("d1", "d2", "d3")] == ["completed"] * 3
    assert (ws / "a" / "x.txt").read_text() == "1\n"
    held: set[str] = set()
    peak = 0
    for event in events:  # a slot is held from delegation_start to delegation_receipt
        if event.type == "delegation_start":
            held.add(event.delegation_id)
        elif event.type == delegation.RECEIPT_EVENT:
            held.discard(event.delegation_id)
        peak = max(peak, len(held))
    assert peak == 2
    assert "delegation repo.d3@" in texts["d3"]
    assert "--- deliverable (verbatim) ---\nfound it" in texts["d3"]


async def test_c10_kill_switch_makes_delegations_strictly_serial(
    ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("YAGENT_CONCURRENCY", "0")
    gated = engine(
        {
            "director": [
                delegates(("d1", "repo", {}), ("d2", "repo", {}), ("d3", "chat", {})),
                finish("director"),
            ],
            "repo.d1": [finish("d1")],
            "repo.d2": [finish("d2")],
            "chat.d3": [finish("d3")],
        }
    )
    config = "[agent]\nmax_parallel_delegations = 8\n"
    async with opened(ws, tmp_path / "home", gated, config) as app:
        sid, _ = await app.run("plan it", agent_name="director")
        kinds = [
            e.type
            for e in app.store.events(sid)
            if e.type in ("delegation_start", delegation.RECEIPT_EVENT)
        ]
    assert kinds == ["delegation_start", delegation.RECEIPT_EVENT] * 3


async def test_topology_refusal_is_a_refused_result_and_the_director_carries_on(
    ws: Path, tmp_path: Path
) -> None:
    gated = engine(
        {
            "director": [
                delegates(("d1", "devops", {}), ("d2", "nobody", {}), ("d3", "repo", {})),
                finish("director"),
            ],
            "repo.d3": [finish("d3")],
        }
    )
    config = '[agents.director]\ndelegates = ["repo", "coding"]\n'
    async with opened(ws, tmp_path / "home", gated, config) as app:
        sid, result = await app.run("plan it", agent_name="director")
        got, texts = receipts(app, sid), results(app, sid)
        board = await app.board.snapshot()
    assert result.status.value == "finished"
    assert got["d1"]["status"] == "refused"
    assert "not_allowed" in got["d1"]["reason"]
    assert "devops.d1@" in texts["d1"]
    assert ": refused" in texts["d1"]
    assert "unknown_callee" in got["d2"]["reason"]
    assert got["d3"]["status"] == "completed"
    assert [t.id.split("/", 1)[1].split("@")[0] for t in board.tasks] == ["repo.d3"]


async def test_a_delegation_cycle_is_a_config_error_at_construction(
    ws: Path, tmp_path: Path
) -> None:
    config = '[agents.coding]\ndelegates = ["director"]\n'
    with pytest.raises(ConfigError, match="cycle"):
        async with opened(ws, tmp_path / "home", engine({}), config):
            pass


async def test_overlapping_writers_are_refused_before_they_start(ws: Path, tmp_path: Path) -> None:
    started = anyio.Event()

    async def hold() -> None:
        started.set()
        with anyio.fail_after(GUARD):
            await overlap_decided.wait()

    overlap_decided = anyio.Event()
    gated = engine(
        {
            "director": [
                delegates(
                    ("d1", "coding", {"write": ["src"]}), ("d2", "coding", {"write": ["src/x"]})
                ),
                finish("director"),
            ],
            "coding.d1": [finish("d1")],
            "coding.d2": [finish("d2")],
        }
    )
    gated.before[("coding.d1", 0)] = hold
    gated.before[("coding.d2", 0)] = hold
    async with opened(ws, tmp_path / "home", gated) as app:

        def observe(event: Any) -> None:
            if event.type == delegation.RECEIPT_EVENT:
                overlap_decided.set()

        app.observers.append(observe)
        sid, _ = await app.run("plan it", agent_name="director")
        got = receipts(app, sid)
    statuses = sorted(got[c]["status"] for c in ("d1", "d2"))
    assert statuses == ["completed", "refused"]
    refused = next(r for r in got.values() if r["status"] == "refused")
    assert "conflicting worktree declarations" in refused["reason"]
    assert refused["run_status"] == ""  # it never ran


async def test_g13_total_timeout_fails_the_delegation_with_a_note_and_the_director_goes_on(
    ws: Path, tmp_path: Path
) -> None:
    gated = engine(
        {
            "director": [delegates(("slow", "repo", {})), finish("director", "reported")],
            "repo.slow": [finish("slow")],
        }
    )

    async def never() -> None:
        await anyio.sleep_forever()

    gated.before[("repo.slow", 0)] = never
    config = "[agent]\ndelegate_total_timeout = 0.5\ndelegate_idle_timeout = 600\n"
    async with opened(ws, tmp_path / "home", gated, config) as app:
        sid, result = await app.run("plan it", agent_name="director")
        got, texts = receipts(app, sid), results(app, sid)
        board = await app.board.snapshot()
    assert result.status.value == "finished"
    assert result.deliverable == "reported"
    assert got["slow"]["status"] == "failed"
    assert got["slow"]["run_status"] == "total_timeout"
    assert any("total timeout" in n for n in got["slow"]["notes"])
    assert "note: the delegation hit its total timeout" in texts["slow"]
    assert [t.status for t in board.tasks] == [taskboard.Status.FAILED]


async def test_c9_a_queued_delegation_starts_its_watchdog_when_it_gets_its_slot(
    ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    now = [1000.0]
    monkeypatch.setattr(delegation, "clock", lambda: now[0])

    def busy(seconds: float) -> Hook:
        async def hook() -> None:  # the delegation's own work takes `seconds` of (fake) time
            now[0] += seconds
            await anyio.sleep(1.2)  # a bounded window for the watchdog to look (it polls 0.5 s)

        return hook

    gated = engine(
        {
            "director": [delegates(("d1", "repo", {}), ("d2", "repo", {})), finish("director")],
            "repo.d1": [finish("d1")],
            "repo.d2": [finish("d2")],
        }
    )
    gated.before[("repo.d1", 0)] = busy(6)
    gated.before[("repo.d2", 0)] = busy(6)
    config = (
        "[agent]\nmax_parallel_delegations = 1\ndelegate_total_timeout = 10\n"
        "delegate_idle_timeout = 600\n"
    )
    async with opened(ws, tmp_path / "home", gated, config) as app:
        sid, _ = await app.run("plan it", agent_name="director")
        got = receipts(app, sid)
    # d2 queued for d1's 6 s; counted from the queue it would be past its 10 s total
    assert [got[c]["status"] for c in ("d1", "d2")] == ["completed", "completed"]


async def test_c11_g14_an_abandoned_pause_leaves_the_delegation_paused_without_a_note(
    ws: Path, tmp_path: Path
) -> None:
    gated = engine(
        {
            "director": [delegates(("d1", "repo", {})), finish("director")],
            "repo.d1": [tool("list_dir", "l1"), finish("d1")],
        }
    )
    async with opened(ws, tmp_path / "home", gated) as app:

        async def halt() -> None:
            app.pause.halt("the person walked away")

        gated.before[("repo.d1", 0)] = halt
        sid, result = await app.run("plan it", agent_name="director")
        got, texts = receipts(app, sid), results(app, sid)
        board = await app.board.snapshot()
    assert result.status.value == "paused"
    assert got["d1"]["status"] == "paused"
    assert got["d1"]["notes"] == []
    assert got["d1"]["reason"] == ""
    assert [t.status for t in board.tasks] == [taskboard.Status.OPEN]  # released, not failed
    assert "note:" not in texts["d1"]


async def test_c3_c14_a_plain_text_answer_comes_back_with_a_no_submission_note(
    ws: Path, tmp_path: Path
) -> None:
    gated = engine(
        {
            "director": [delegates(("d1", "chat", {})), finish("director")],
            "chat.d1": [say("just some words")],
        }
    )
    async with opened(ws, tmp_path / "home", gated) as app:
        sid, _ = await app.run("plan it", agent_name="director")
        got, texts = receipts(app, sid), results(app, sid)
        (task,) = (await app.board.snapshot()).tasks
    assert got["d1"]["submitted"] is False
    assert any("no deliverable was submitted through agent_exit" in n for n in got["d1"]["notes"])
    assert "--- last reply (not a submission) ---\njust some words" in texts["d1"]
    assert json.loads(task.result)["notes"] == got["d1"]["notes"]  # the receipt is the board's


async def test_c10_a_nested_delegation_shares_the_pool_without_deadlock(
    ws: Path, tmp_path: Path
) -> None:
    gated = engine(
        {
            "director": [delegates(("d1", "planner", {"write": ["a"]})), finish("director")],
            "planner.d1": [
                delegates(("n1", "repo", {"read": ["a"]}), ("n2", "coding", {"write": ["b"]})),
                finish("d1", "planned"),
            ],
            "repo.n1": [finish("n1", "looked")],
        }
    )
    config = (
        "[agent]\nmax_parallel_delegations = 1\n"
        '[agents.planner]\nprompt = "Plan."\ntools = ["delegate", "read_file"]\n'
        'delegates = ["repo", "coding"]\n'
    )
    async with opened(ws, tmp_path / "home", gated, config) as app:
        with anyio.fail_after(GUARD):  # a parent waiting on a child queued behind it: a hang
            sid, result = await app.run("plan it", agent_name="director")
        got = receipts(app, sid)
        calls = app.store.tool_calls(sid)
    assert result.status.value == "finished"
    assert got["d1"]["status"] == "completed"
    assert got["n1"]["status"] == "completed"
    assert got["n1"]["delegation_id"].endswith("@" + got["d1"]["delegation_id"])
    # the nested writer may only write inside its delegator's own writable areas
    assert got["n2"]["status"] == "refused"
    assert "not writable by the delegator" in got["n2"]["reason"]
    assert {c.delegation_id for c in calls if c.call_id == "n1"} == {got["d1"]["delegation_id"]}


async def test_c1_the_default_agent_may_be_the_director(ws: Path, tmp_path: Path) -> None:
    gated = engine({"director": [finish("director", "planned")]})
    config = '[agent]\ndefault = "director"\n'
    async with opened(ws, tmp_path / "home", gated, config) as app:
        _, result = await app.run("plan it")
    assert result.deliverable == "planned"
    assert [ident for ident, _ in gated.inner.requests] == ["director"]


def test_a_builtin_agents_table_without_a_prompt_may_only_say_whom_it_delegates_to() -> None:
    from yagent.agents import catalog

    assert catalog.topology_only("coding", {"delegates": ["repo"], "prompt": None, "tools": None})
    assert not catalog.topology_only("mine", {"delegates": ["repo"], "prompt": None})
    with pytest.raises(catalog.AgentConfigError, match="only 'delegates' may be set"):
        catalog.topology_only("coding", {"delegates": ["repo"], "model": "m", "prompt": None})


class Crash(BaseException):
    """The process dying between a child's end and its outcome's record (nothing catches it)."""


async def test_c13_g15_resume_hands_back_a_degraded_report_when_the_outcome_was_never_recorded(
    ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from yagent.app.durable import Action
    from yagent.app.runtrack import continuation_task

    home = tmp_path / "home"
    scripts: dict[str, list[Step]] = {
        "director": [delegates(("z", "coding", {"write": ["a"]})), finish("director", "over")],
        "coding.z": [
            tool("write_file", "wz", path="a/x.txt", content="x\n"),
            say("wrote a/x.txt"),
            finish("z", "written"),
        ],
    }

    async def die(*args: object, **kwargs: object) -> None:
        raise Crash

    monkeypatch.setattr(delegation.Runner, "_record", die)
    sessions: list[str] = []

    async def first_process() -> None:
        async with opened(ws, home, engine(scripts)) as app:
            sessions.append(app.new_session("plan it", "director"))
            await app.run("plan it", agent_name="director", session_id=sessions[0])

    with pytest.raises(BaseExceptionGroup) as crashed:
        await first_process()
    assert crashed.group_contains(Crash)
    sid = sessions[0]
    monkeypatch.undo()

    again = engine({"director": [finish("director", "over")]})
    async with opened(ws, home, again) as app:
        decision = await app.durable.decide(sid)
        assert decision.action is Action.CONTINUE
        _, result = await app.run(
            continuation_task(decision), session_id=sid, resume=decision, agent_name="director"
        )
        text = results(app, sid)["z"]
    assert result.status.value == "finished"
    assert "coding.z@" in text
    assert ": failed" in text
    assert "degraded handoff" in text
    assert "its run concluded" in text
    assert "write_file" in text
    assert "files written: a/x.txt" in text
    assert [ident for ident, _ in again.inner.requests] == ["director"]  # nothing re-ran
    assert (ws / "a" / "x.txt").read_text() == "x\n"


async def test_writers_queue_when_the_preset_cannot_confine_them_and_the_result_says_so(
    ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runners: list[delegation.Runner] = []
    made = delegation.Runner.__init__

    def record(self: delegation.Runner, *args: Any) -> None:
        made(self, *args)
        runners.append(self)

    monkeypatch.setattr(delegation.Runner, "__init__", record)

    first: list[bool] = []

    async def until_the_other_writer_waits() -> None:
        """The writer that runs first answers once the other waits for the writers' lock."""
        if first:
            return
        first.append(True)
        with anyio.fail_after(GUARD):
            while runners[0].pool.writers.statistics().tasks_waiting == 0:  # noqa: ASYNC110
                await anyio.sleep(0.01)  # the lock offers no event to wait for

    gated = engine(
        {
            "director": [
                delegates(("d1", "coding", {"write": ["a"]}), ("d2", "coding", {"write": ["b"]})),
                finish("director"),
            ],
            "coding.d1": [finish("d1")],
            "coding.d2": [finish("d2")],
        }
    )
    gated.before[("coding.d1", 0)] = until_the_other_writer_waits
    gated.before[("coding.d2", 0)] = until_the_other_writer_waits
    config = '[agent]\npreset = "yolo"\nmax_parallel_delegations = 2\n'
    async with opened(ws, tmp_path / "home", gated, config) as app:
        sid, _ = await app.run("plan it", agent_name="director")
        got = receipts(app, sid)
        events = [e.type for e in app.store.events(sid) if e.delegation_id != ""]
    assert [got[c]["status"] for c in ("d1", "d2")] == ["completed", "completed"]
    queued = [c for c in ("d1", "d2") if any("queued behind" in n for n in got[c]["notes"])]
    assert len(queued) == 1
    starts = [t for t in events if t in ("delegation_start", delegation.RECEIPT_EVENT)]
    assert starts == ["delegation_start", delegation.RECEIPT_EVENT] * 2  # one writer at a time


async def test_the_trace_shows_one_turn_with_a_span_per_delegation(
    ws: Path, tmp_path: Path
) -> None:
    from yagent.app.telemetry import project

    gated = engine(
        {
            "director": [delegates(("d1", "repo", {}), ("d2", "chat", {})), finish("director")],
            "repo.d1": [finish("d1")],
            "chat.d2": [finish("d2")],
        }
    )
    async with opened(ws, tmp_path / "home", gated) as app:
        sid, _ = await app.run("plan it", agent_name="director")
        projection = project(app.store.events(sid))
        got = receipts(app, sid)
    (turn,) = projection.turns
    assert turn.closed
    spans = sorted(r.scope for r in turn.rows if r.kind.value == "span")
    assert spans == sorted([got["d1"]["delegation_id"], got["d2"]["delegation_id"]])


async def test_a_recorded_director_session_replays_without_divergence(tmp_path: Path) -> None:
    from yagent.app.recording import markers, recording_of
    from yagent.cli.runner import normalise
    from yagent.llm.replay import ReplayEngine

    def workspace(name: str) -> Path:
        root = tmp_path / name
        (root / ".git").mkdir(parents=True)
        (root / "README.md").write_text("# project\n")
        return root

    gated = engine(
        {
            "director": [
                delegates(("d1", "coding", {"write": ["a"]}), ("d2", "repo", {})),
                delegates(("d3", "devops", {})),
                finish("director", "all done"),
            ],
            "coding.d1": [tool("write_file", "w1", path="a/x.txt", content="1\n"), finish("d1")],
            "repo.d2": [tool("read_file", "r2", path="README.md"), finish("d2", "read it")],
        }
    )
    config = '[agents.director]\ndelegates = ["coding", "repo"]\n'
    async with opened(workspace("first"), tmp_path / "home1", gated, config) as app:
        sid, _ = await app.run("plan it", agent_name="director")
        recording, task, agent = recording_of(app.store, sid)
        marker = app.agent("director").marker
    assert sorted(recording.agents) == ["coding.d1", "director", "repo.d2"]
    replay = ReplayEngine(recording, markers=markers(recording, agent, marker), normalise=normalise)
    second = workspace("second")
    async with opened(second, tmp_path / "home2", Gated(replay), config) as app:  # type: ignore[arg-type]
        _, result = await app.run(task, agent_name=agent)
    assert result.deliverable == "all done"
    assert replay.divergences == []
    assert (second / "a" / "x.txt").read_text() == "1\n"


async def test_c9_a_delegation_is_not_bounded_by_the_loops_tool_timeout(
    ws: Path, tmp_path: Path
) -> None:
    gated = engine(
        {
            "director": [delegates(("d1", "repo", {})), finish("director")],
            "repo.d1": [finish("d1", "took a while")],
        }
    )

    async def slow() -> None:
        await anyio.sleep(1.5)  # a bounded window past the tool backstop below

    gated.before[("repo.d1", 0)] = slow
    config = "[agent]\ntool_timeout = 0.5\n"
    async with opened(ws, tmp_path / "home", gated, config) as app:
        sid, _ = await app.run("plan it", agent_name="director")
        got, texts = receipts(app, sid), results(app, sid)
    assert got["d1"]["status"] == "completed"
    assert "took a while" in texts["d1"]


async def test_c4_only_an_agent_with_the_delegate_tool_gets_the_roster(
    ws: Path, tmp_path: Path
) -> None:
    config = (
        '[agents.planner]\nprompt = "Plan."\ntools = ["delegate", "read_file"]\n'
        'delegates = ["repo"]\n'
        '[agents.reader]\nprompt = "Read."\ntools = ["read_file"]\ndelegates = ["repo"]\n'
    )
    async with opened(ws, tmp_path / "home", engine({}), config) as app:
        planner, reader = app.agent("planner"), app.agent("reader")
    assert "Agents you may delegate to" in planner.prompt
    assert "Agents you may delegate to" not in reader.prompt  # it could not call one
