"""A run driven through an object that has only its bundle's members (`app.services`): the run
modules need nothing of the app beyond what their bundles declare — the turn's own reads, its
delegations' and a parallel plan's, each given exactly the members of its bundle."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.app.test_opensession import Answers
from tests.test_gate_run_services import SERVICES, bundles, members
from yagent.app import fanrun, turn
from yagent.app.assemble import App, open_app
from yagent.app.config import load
from yagent.app.fanout import Assignment

pytestmark = pytest.mark.anyio


class Only:
    """The app seen through one bundle: any other member is an AttributeError."""

    def __init__(self, app: App, bundle: str) -> None:
        self._app = app
        self._names = members(bundle, bundles(SERVICES.read_text()))

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_") or name not in self._names:
            raise AttributeError(f"{name} is not in the bundle")
        return getattr(self._app, name)


async def test_a_turn_runs_on_its_bundle_alone(dirs: tuple[Path, Path]) -> None:
    home, ws = dirs
    async with open_app(
        load(home=home, workspace=ws), home=home, workspace=ws, interactive=False, engine=Answers()
    ) as app:
        only: Any = Only(app, "TurnServices")
        sid, result = await turn.run_task(only, "hello", agent_name="chat")
        assert result.status.value == "answered", result.error
        _, again = await turn.run_task(only, "and again", agent_name="chat", session_id=sid)
        assert again.deliverable or again.text == "answer to and again"
        with pytest.raises(AttributeError, match="is not in the bundle"):
            Only(app, "LaneServices").store  # noqa: B018  # the double refuses the rest


async def test_a_parallel_run_runs_on_its_bundle_alone(dirs: tuple[Path, Path]) -> None:
    home, ws = dirs
    (ws / ".git").mkdir()
    async with open_app(
        load(home=home, workspace=ws), home=home, workspace=ws, interactive=False, engine=Answers()
    ) as app:
        only: Any = Only(app, "ParallelServices")
        ran = await fanrun.run_parallel(only, [Assignment("a", "look around", agent="chat")])
    assert [t.name for t in ran.tasks] == ["a"]
    assert ran.tasks[0].receipt.ok, ran.tasks[0].receipt
