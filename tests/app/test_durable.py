"""Durable runs: the resume decision, the per-step record, the single end commit, settling."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio
import pytest

from yagent.app.config import Config, ConfigError
from yagent.app.durable import (
    CONCLUDED,
    END_STEP,
    Action,
    Durable,
    RunRow,
    decide,
    open_home,
)
from yagent.app.fulldisk import FullDisk
from yagent.app.runtrack import RunTrack, continuation_task, open_track
from yagent.kernel.durable import checkpoint, commitgate, sideeffect
from yagent.llm import Message, ToolCall
from yagent.memory import SessionStore
from yagent.tools.effectrun import idempotency_key

RUN = RunRow("s:coding:1", "s", "", 1, "coding", "fix it", 5, 0.0)
Events = list[tuple[str, dict[str, Any]]]


def snap(state: checkpoint.RunState, *steps: checkpoint.StepRecord) -> checkpoint.RunProgress:
    return checkpoint.RunProgress(RUN.run_id, len(steps) + 1, state, steps)


def done(n: int, detail: str = "") -> checkpoint.StepRecord:
    return checkpoint.StepRecord(str(n), checkpoint.StepStatus.COMPLETED, "sha256:x", detail)


def running(n: int, detail: str = "") -> checkpoint.StepRecord:
    return checkpoint.StepRecord(str(n), checkpoint.StepStatus.RUNNING, detail=detail)


ACTIVE = checkpoint.RunState.ACTIVE
LOADED = json.dumps({"status": "", "materialized": {"loaded": ["web_fetch"]}})


def test_no_run_on_record_starts_a_new_turn() -> None:
    decision = decide("s", None, None, None)
    assert decision.action is Action.NEW_TURN
    assert "no run" in decision.describe()


def test_a_committed_run_is_never_reopened() -> None:
    commit = commitgate.Commit(RUN.run_id, END_STEP, "finished", "h", 1.0)
    decision = decide("s", RUN, snap(ACTIVE, done(1)), commit)
    assert decision.action is Action.NEW_TURN
    assert "never reopened" in decision.reason


def test_a_terminal_snapshot_is_not_continued() -> None:
    decision = decide("s", RUN, snap(checkpoint.RunState.SUCCEEDED, done(1)), None)
    assert decision.action is Action.NEW_TURN
    assert decision.resume is not None
    assert decision.resume.action is checkpoint.ResumeAction.TERMINAL


def test_a_record_that_does_not_fit_the_plan_is_a_mismatch() -> None:
    decision = decide("s", RUN, snap(ACTIVE, done(1), done(9)), None)
    assert decision.action is Action.NEW_TURN
    assert "mismatch" in decision.reason


def test_a_crash_mid_step_continues_after_it_with_the_loaded_tools() -> None:
    decision = decide("s", RUN, snap(ACTIVE, done(1), running(2, LOADED)), None)
    assert decision.action is Action.CONTINUE
    assert decision.start_step == 2
    assert decision.materialized == {"loaded": ["web_fetch"]}
    assert "killed or crashed" in decision.reason
    assert "step 2 was in flight" in decision.reason
    assert decision.status == ""


def test_an_interruption_says_which_and_continues() -> None:
    detail = json.dumps({"status": "cancelled", "materialized": {}})
    decision = decide("s", RUN, snap(ACTIVE, done(1), done(2, detail)), None)
    assert decision.action is Action.CONTINUE
    assert decision.start_step == 2
    assert decision.status == "cancelled"


def test_a_run_that_died_before_its_first_step_continues_from_the_start() -> None:
    decision = decide("s", RUN, None, None)
    assert decision.action is Action.CONTINUE
    assert decision.start_step == 0
    assert decision.materialized == {}


def test_completions_after_a_hole_are_not_trusted() -> None:
    decision = decide("s", RUN, snap(ACTIVE, done(1), running(2), done(3, "not json")), None)
    assert decision.action is Action.CONTINUE
    assert decision.start_step == 1
    assert "not trusted: 3" in decision.reason


@pytest.fixture
def durable(tmp_path: Path) -> Any:
    d = Durable(tmp_path / "durable.db")
    yield d
    d.close()


@pytest.fixture
def store(tmp_path: Path) -> Any:
    s = SessionStore(tmp_path / "sessions.db")
    yield s
    s.close()


async def new_track(
    durable: Durable, store: SessionStore, events: Events, session: str, **kw: Any
) -> RunTrack:
    def publish(kind: str, payload: Mapping[str, Any]) -> None:
        events.append((kind, dict(payload)))

    kw.setdefault("full", FullDisk(lambda _: None))
    return await open_track(
        durable,
        store=store,
        session_id=session,
        agent="coding",
        task="fix it",
        max_steps=5,
        publish=publish,
        materialized=lambda: {"loaded": ["x"]},
        **kw,
    )


@pytest.mark.anyio
async def test_each_step_is_checkpointed_and_a_conclusion_committed_once(
    durable: Durable, store: SessionStore
) -> None:
    sid = store.create_session(workspace="/w").id
    events: Events = []
    track = await new_track(durable, store, events, sid)
    assert track.run.run_id == f"{sid}:coding:1"
    await track.step(1)
    track.observe("assistant_turn", {"step": 1, "text": "t", "tool_calls": [{"id": "a"}]})
    track.observe("tool_result", {"step": 1, "call_id": "a", "ok": True})
    track.observe("tool_result", {"call_id": "no step"})
    await track.step(2)
    saved = await durable.checkpoints.load(track.run.run_id)
    assert saved is not None
    assert [(s.id, s.status) for s in saved.steps] == [
        ("1", checkpoint.StepStatus.COMPLETED),
        ("2", checkpoint.StepStatus.RUNNING),
    ]
    assert json.loads(saved.steps[1].detail)["materialized"] == {"loaded": ["x"]}
    await track.end("finished")
    commit = await durable.gate.committed(track.run.run_id, END_STEP)
    assert commit is not None
    assert commit.state == "finished"
    final = await durable.checkpoints.load(track.run.run_id)
    assert final is not None
    assert final.state is checkpoint.RunState.SUCCEEDED
    assert ("run_commit", True) in [(k, p.get("committed")) for k, p in events]
    assert (await durable.decide(sid)).action is Action.NEW_TURN
    nxt = await new_track(durable, store, events, sid)
    assert nxt.run.turn == 2  # the session goes on with a new run


@pytest.mark.anyio
async def test_two_branches_of_one_run_cannot_both_conclude_it(
    durable: Durable, store: SessionStore
) -> None:
    sid = store.create_session(workspace="/w").id
    events: Events = []
    first = await new_track(durable, store, events, sid)
    await first.step(1)
    await first.end("cancelled")
    decision = await durable.decide(sid)
    assert decision.action is Action.CONTINUE
    branches = [await new_track(durable, store, events, sid, resume=decision) for _ in range(2)]
    async with anyio.create_task_group() as tg:
        for branch, status in zip(branches, ("finished", "answered"), strict=True):
            tg.start_soon(branch.end, status)
    commits = [p for k, p in events if k == "run_commit"]
    assert sorted(p["committed"] for p in commits) == [False, True]
    assert "concluded it first" in next(p["reason"] for p in commits if not p["committed"])
    # the two also raced on the checkpoint seq: the loser stopped writing, and said so
    assert any(k == "checkpoint" and "newer checkpoint" in p["reason"] for k, p in events)
    winner = await durable.gate.committed(first.run.run_id, END_STEP)
    assert winner is not None
    assert winner.state in ("finished", "answered")


@pytest.mark.anyio
async def test_an_interruption_keeps_the_run_resumable(
    durable: Durable, store: SessionStore
) -> None:
    sid = store.create_session(workspace="/w").id
    events: Events = []
    track = await new_track(durable, store, events, sid)
    await track.step(1)
    await track.step(2)
    await track.end("paused")
    assert "paused" not in CONCLUDED
    assert await durable.gate.committed(track.run.run_id, END_STEP) is None
    decision = await durable.decide(sid)
    assert decision.action is Action.CONTINUE
    assert decision.status == "paused"
    assert decision.start_step == 2
    resumed = await new_track(durable, store, events, sid, resume=decision)
    assert resumed.run == track.run
    assert ("run_resumed", 2) in [(k, p.get("start_step")) for k, p in events]
    await resumed.step(3)
    saved = await durable.checkpoints.load(track.run.run_id)
    assert saved is not None
    assert [s.id for s in saved.steps] == ["1", "2", "3"]
    assert "The task:\nfix it" in continuation_task(decision)


@pytest.mark.anyio
async def test_a_raising_run_still_records_its_end(durable: Durable, store: SessionStore) -> None:
    sid = store.create_session(workspace="/w").id
    track = await new_track(durable, store, [], sid)

    async def buggy() -> None:
        async with track.guard():
            await track.step(1)
            raise RuntimeError("bug")

    with pytest.raises(RuntimeError):
        await buggy()
    decision = await durable.decide(sid)
    assert decision.status == "error"
    with anyio.CancelScope() as scope:
        async with track.guard():
            scope.cancel()
            await anyio.sleep_forever()
    assert (await durable.decide(sid)).status == "cancelled"


@pytest.mark.anyio
async def test_a_store_failure_is_said_not_fatal(durable: Durable, store: SessionStore) -> None:
    sid = store.create_session(workspace="/w").id
    events: Events = []
    track = await new_track(durable, store, events, sid)
    durable.checkpoints.close()
    durable.gate.close()
    await track.step(1)
    await track.end("finished")
    reasons = [p["reason"] for k, p in events if k in ("checkpoint", "run_commit")]
    assert any("checkpoint not saved" in r for r in reasons)
    assert any("commit gate failed" in r for r in reasons)


@pytest.mark.anyio
async def test_calls_left_open_by_a_dead_process_are_settled_never_rerun(
    durable: Durable, store: SessionStore
) -> None:
    sid = store.create_session(workspace="/w").id
    events: Events = []
    track = await new_track(durable, store, events, sid)
    key = idempotency_key(sid, "", "push")
    action = sideeffect.Action(key, key)
    done_key = idempotency_key(sid, "", "pub")
    grant = await durable.effects.acquire(sideeffect.Action(done_key, done_key), "h", 30)
    assert grant.lease is not None
    body = {"ok": True, "content": "published", "kind": None}
    await durable.effects.complete(grant.lease, json.dumps(body).encode())
    await durable.effects.acquire(action, "gone:1:x", 30)  # the intent a dead process left
    gone_key = idempotency_key(sid, "", "nope")
    lost = await durable.effects.acquire(sideeffect.Action(gone_key, gone_key), "h", 30)
    assert lost.lease is not None
    await durable.effects.abandon(lost.lease, "refused before it ran")
    store.record_tool_call(sid, call_id="push", name="run_bash", arguments="{}", started_at=1.0)
    calls = (
        ToolCall("push", "run_bash", '{"command": "git push"}'),
        ToolCall("pub", "run_bash", "{}"),
        ToolCall("nope", "run_bash", "{}"),
        ToolCall("edit", "write_file", "{}"),
        ToolCall("fine", "read_file", "{}"),
    )
    history = [
        Message("user", "go"),
        Message("assistant", "", calls),
        Message("tool", "ok", tool_call_id="fine", name="read_file"),
        Message("user", "later"),
    ]
    settled = await track.settle(history)
    assert [m.tool_call_id for m in settled if m.role == "tool"] == [
        "fine",
        "push",
        "pub",
        "nope",
        "edit",
    ]
    assert settled[-1].content == "later"  # the results come before the next user message
    by_id = {m.tool_call_id: m.content for m in settled if m.role == "tool"}
    assert "OUTCOME UNKNOWN" in by_id["push"]
    assert "git push" in by_id["push"]
    assert by_id["pub"].endswith("published")
    assert "did not take effect" in by_id["nope"]
    assert "INTERRUPTED" in by_id["edit"]
    assert [k for k, p in events if k == "side_effect"] == ["side_effect"]
    assert len(store.messages(sid)) == 4  # persisted in the session
    recorded = store.tool_calls(sid)[0]
    assert recorded.ok is False
    assert "OUTCOME UNKNOWN" in (recorded.content or "")
    assert await track.settle(settled) == settled  # nothing left open: nothing changes


def test_a_bad_side_effect_rule_is_a_configuration_error(tmp_path: Path) -> None:
    config = Config.model_validate({"side_effects": [{"name": "x", "prefix": "a", "typo": 1}]})
    with pytest.raises(ConfigError, match=r"\[\[side_effects\]\]"):
        open_home(tmp_path / "home", config)
    fine = open_home(tmp_path / "home", Config())
    assert (tmp_path / "home" / "durable.db").exists()
    fine.close()
