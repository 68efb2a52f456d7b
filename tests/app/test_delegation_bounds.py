"""Delegations are bounded by their pool alone (Director constraint C10): the step's tool limit
(`[agent] max_parallel_tools`) does not cap delegate calls. In process: scripted model routed by
agent identity, real stores; the concurrency is proven by a rendezvous of every delegation."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from tests.app.test_delegation import delegates, engine, opened, receipts
from tests.app.test_fanout import GUARD, Gated, Hook, finish

pytestmark = pytest.mark.anyio
SIX = [f"d{n}" for n in range(1, 7)]


def meet_all(gated: Gated, names: list[str]) -> None:
    """Each delegation answers its first request only once all of them have asked: a run that
    holds any one back (a tool limit below their number) never gets there."""
    arrived = {name: anyio.Event() for name in names}

    def meet(me: str) -> Hook:
        async def hook() -> None:
            arrived[me].set()
            with anyio.fail_after(GUARD):
                for event in arrived.values():
                    await event.wait()

        return hook

    for name in names:
        gated.before[(name, 0)] = meet(name)


async def test_c10_g12_the_pool_alone_bounds_delegations_not_the_step_tool_limit(
    tmp_path: Path,
) -> None:
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    scripts = {f"repo.{d}": [finish(d)] for d in SIX}
    gated = engine(
        {"director": [delegates(*[(d, "repo", {}) for d in SIX]), finish("director")], **scripts}
    )
    meet_all(gated, [f"repo.{d}" for d in SIX])
    config = "[agent]\nmax_parallel_delegations = 6\nmax_parallel_tools = 4\n"
    async with opened(ws, tmp_path / "home", gated, config) as app:
        sid, result = await app.run("plan it", agent_name="director")
        got = receipts(app, sid)
        steps = app.store.events(sid, types="sub_agent_activity", delegation_id="")
    assert result.status.value == "finished"
    assert [got[d]["status"] for d in SIX] == ["completed"] * 6
    assert max(int(e.payload["parallel_peak"]) for e in steps) == 6
