"""What a step costs the app beside the loop, counted (issue 17's seventh pass): each test counts
work that was done again at every step for the same answer, and goes red when it comes back."""

from __future__ import annotations

import json
import types
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from yagent.app import runtrack
from yagent.app.durable import Durable
from yagent.app.fulldisk import FullDisk
from yagent.app.runtrack import RunTrack, open_track
from yagent.kernel.durable import checkpoint
from yagent.memory import SessionStore


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


async def track_of(durable: Durable, store: SessionStore, loaded: list[str]) -> RunTrack:
    def publish(kind: str, payload: Mapping[str, Any]) -> None:
        pass

    return await open_track(
        durable,
        store=store,
        session_id=store.create_session(workspace="/w").id,
        agent="coding",
        task="t",
        max_steps=100,
        publish=publish,
        materialized=lambda: {"version": 1, "loaded": list(loaded)},
        full=FullDisk(lambda _: None),
    )


@pytest.mark.anyio
async def test_a_step_detail_is_encoded_again_only_when_the_loaded_tools_changed(
    durable: Durable, store: SessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The RUNNING step's detail (status and loaded tools) was JSON-encoded at every step,
    although a run's loaded set stays the same over most steps."""
    encoded: list[Any] = []

    def dumps(value: Any, **kw: Any) -> str:
        encoded.append(value)
        return json.dumps(value, **kw)

    monkeypatch.setattr(runtrack, "json", types.SimpleNamespace(dumps=dumps))
    loaded: list[str] = []
    track = await track_of(durable, store, loaded)
    for n in range(1, 21):
        if n == 11:
            loaded.append("web_fetch")  # a tool loaded during step 10: step 11's detail says so
        await track.step(n)
    assert len(encoded) == 2
    saved = await durable.checkpoints.load(track.run.run_id)
    assert saved is not None
    details = {s.id: json.loads(s.detail) for s in saved.steps if s.detail}
    assert details == {
        "20": {"status": "", "error": "", "materialized": encoded[1]["materialized"]}
    }
    assert encoded[1]["materialized"]["loaded"] == ["web_fetch"]
    await track.end("error", "boom")  # another status: encoded again, and stored
    assert len(encoded) == 3
    saved = await durable.checkpoints.load(track.run.run_id)
    assert saved is not None
    assert json.loads(saved.steps[-1].detail)["status"] == "error"


@pytest.mark.anyio
async def test_a_completed_step_digest_is_the_sorted_json_of_its_facts(
    durable: Durable, store: SessionStore
) -> None:
    """The step digest's encoder is built once; the digest stays that of
    `json.dumps(facts, sort_keys=True, default=str)` — what earlier checkpoints hold."""
    track = await track_of(durable, store, [])
    await track.step(1)
    turn = {"step": 1, "text": 'é\u2028 "q"', "tool_calls": [{"id": "a"}, {"id": 7}]}
    track.observe("assistant_turn", turn)
    track.observe("tool_result", {"step": 1, "call_id": "a", "ok": True})
    track.observe("tool_result", {"step": 1, "call_id": 7, "ok": None})
    await track.step(2)
    facts = [["turn", turn["text"], ["a", 7]], ["result", "a", True], ["result", 7, None]]
    expected = checkpoint.digest(json.dumps(facts, sort_keys=True, default=str).encode())
    saved = await durable.checkpoints.load(track.run.run_id)
    assert saved is not None
    assert saved.steps[0].digest == expected
    assert runtrack.facts_text([{"b": object, "a": float("nan")}]) == json.dumps(
        [{"b": object, "a": float("nan")}], sort_keys=True, default=str
    )
    cycle: list[Any] = []
    cycle.append(cycle)
    with pytest.raises(ValueError, match="Circular"):
        runtrack.facts_text(cycle)
