"""Spilled outputs are removed by age, across every session's state directory."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from tests.projecttrust import trust_project
from yagent.app.assemble import open_app
from yagent.app.config import load
from yagent.app.contextconfig import prune_spills
from yagent.kernel.durable.clock import FakeClock
from yagent.llm.scripted import ScriptedEngine

DAY = 86_400.0


def _stored(state: Path, session: str, name: str, age_days: float, now: float) -> Path:
    path = state / session / "spill" / session / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("x" * 10)
    stamp = now - age_days * DAY
    os.utime(path, (stamp, stamp))
    return path


def test_old_outputs_go_young_ones_and_other_state_stay(tmp_path: Path) -> None:
    clock = FakeClock(100 * DAY)
    now = clock.now()
    old_a = _stored(tmp_path, "s1", "old", 15, now)
    young = _stored(tmp_path, "s1", "young", 13, now)
    old_b = _stored(tmp_path, "s2", "old", 30, now)
    other = tmp_path / "s2" / "offload" / "blob"
    other.parent.mkdir(parents=True)
    other.write_text("kept")
    os.utime(other, (0, 0))
    done = prune_spills(tmp_path, 14, clock=clock)
    assert (done.removed, done.removed_bytes, done.failed) == (2, 20, ())
    assert not old_a.exists()
    assert not old_b.exists()
    assert not old_b.parent.exists()  # an emptied session folder goes too
    assert young.exists()
    assert other.exists()  # only spill folders are touched


def test_zero_keeps_everything_and_a_missing_root_is_nothing(tmp_path: Path) -> None:
    clock = FakeClock(100 * DAY)
    kept = _stored(tmp_path, "s1", "old", 90, clock.now())
    assert prune_spills(tmp_path, 0, clock=clock).removed == 0
    assert kept.exists()
    assert prune_spills(tmp_path / "absent", 14, clock=clock).removed == 0


def test_a_symlinked_spill_folder_is_not_followed(tmp_path: Path) -> None:
    clock = FakeClock(100 * DAY)
    outside = tmp_path / "outside"
    victim = _stored(outside, "x", "old", 90, clock.now())
    state = tmp_path / "state"
    (state / "s1").mkdir(parents=True)
    (state / "s1" / "spill").symlink_to(outside / "x" / "spill")
    assert prune_spills(state, 14, clock=clock).removed == 0
    assert victim.exists()


def test_what_cannot_be_removed_is_reported(tmp_path: Path) -> None:
    clock = FakeClock(100 * DAY)
    old = _stored(tmp_path, "s1", "old", 90, clock.now())
    stuck = old.parent / "stuck"
    stuck.mkdir()  # not a stored output: unlink fails, even for root
    os.utime(stuck, (0, 0))
    done = prune_spills(tmp_path, 14, clock=clock)
    assert done.removed == 1
    assert len(done.failed) == 1
    assert "stuck" in done.failed[0]
    assert stuck.exists()


@pytest.mark.anyio
async def test_opening_the_app_prunes_by_the_configured_age(tmp_path: Path) -> None:
    home, workspace = tmp_path / "home", tmp_path / "ws"
    workspace.mkdir()
    now = time.time()
    old = _stored(home / "state", "s1", "old", 20, now)
    young = _stored(home / "state", "s1", "young", 1, now)
    engine = ScriptedEngine({"coding": []})
    config = load(home=home, workspace=workspace)
    async with open_app(
        config, home=home, workspace=workspace, interactive=False, engine=engine
    ) as app:
        assert (app.pruned.removed, app.pruned.failed) == (1, ())
    assert not old.exists()
    assert young.exists()
    (workspace / ".yagent").mkdir()
    (workspace / ".yagent" / "config.toml").write_text("[agent]\nspill_max_age_days = 0\n")
    trust_project(home, workspace)  # the spill age (what is deleted) needs the person's trust
    _stored(home / "state", "s1", "old", 20, now)
    config = load(home=home, workspace=workspace)
    async with open_app(
        config, home=home, workspace=workspace, interactive=False, engine=engine
    ) as app:
        assert app.pruned.removed == 0
