"""The app checks, before a run's first model request, that every granted tool's declared
services are set (`Adapter.require_services` in `app.turn`), and the executors' declarations
match what the app sets: a real run through every profile's surface meets no unmet service."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.app.test_delegation import engine, opened
from tests.app.test_fanout import finish
from yagent.tools import registry
from yagent.tools.adapter import ToolContext
from yagent.tools.invocation import MissingServiceError, Slot, needs

pytestmark = pytest.mark.anyio
NOWHERE: Slot[str] = Slot("set by no host")


async def test_a_run_whose_granted_tool_lacks_a_service_stops_before_the_model_is_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)

    @needs(NOWHERE)
    async def think(ctx: ToolContext, args: Any) -> Any:
        return {}

    monkeypatch.setitem(registry._BUILTIN, "think", think)
    gated = engine({"director": [finish("director")]})
    async with opened(ws, tmp_path / "home", gated) as app:
        with pytest.raises(MissingServiceError, match=r"think needs .*set by no host"):
            await app.run("plan it", agent_name="director")
    assert gated.inner.requests == []


async def test_the_director_and_its_delegates_run_with_every_declared_service_set(
    tmp_path: Path,
) -> None:
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    gated = engine({"director": [finish("director", "planned")]})
    async with opened(ws, tmp_path / "home", gated) as app:
        _, result = await app.run("plan it", agent_name="director")
    assert result.deliverable == "planned"
