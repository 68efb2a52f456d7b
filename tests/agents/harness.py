"""A production-shaped harness for loop tests: the real surface, adapter, flow executors."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import anyio

from yagent.agents.loopconfig import LoopConfig
from yagent.llm.scripted import ScriptedEngine, Step
from yagent.tools import flow
from yagent.tools.adapter import Adapter, Executor, ToolContext
from yagent.tools.guard import WorkspaceGuard
from yagent.tools.surface import Surface, SurfaceOptions
from yagent.toolspec import BUILTIN, Effect, Spec, Tier, profile

SLOW = Spec("lab__slow_read", "Read slowly.", {"type": "object"}, Effect.READ, Tier.HOT)
HANG = Spec("lab__hang", "Never returns.", {"type": "object"}, Effect.EXEC, Tier.HOT)


class Probe:
    """Counts how many slow reads run at once."""

    def __init__(self) -> None:
        self.running = 0
        self.peak = 0

    async def slow_read(self, ctx: ToolContext, args: Any) -> dict[str, Any]:
        self.running += 1
        self.peak = max(self.peak, self.running)
        await anyio.sleep(0.05)
        self.running -= 1
        return {"ok": True}


async def hang(ctx: ToolContext, args: Any) -> dict[str, Any]:
    await anyio.sleep(3600)
    return {}


def build(
    workspace: Path,
    steps: Sequence[Step],
    *,
    name: str = "coding",
    events: list[tuple[str, Mapping[str, Any]]] | None = None,
    rollout: list[tuple[str, Mapping[str, Any]]] | None = None,
    checkpoints: list[Mapping[str, Any]] | None = None,
    probe: Probe | None = None,
    **overrides: Any,
) -> tuple[LoopConfig, ScriptedEngine]:
    guard = WorkspaceGuard(workspace)
    surface = Surface(
        BUILTIN,
        profile("coding"),
        guard,
        external=[SLOW, HANG],
        options=SurfaceOptions(deferred=False),
    )
    probe = probe or Probe()
    executors: dict[str, Executor] = {
        "think": flow.think,
        "agent_exit": flow.agent_exit,
        SLOW.name: probe.slow_read,
        HANG.name: hang,
    }
    adapter = Adapter(ToolContext(workspace, surface), executors)
    engine = ScriptedEngine({name: list(steps)}, markers={name: f"You are the {name} agent"})
    settings: dict[str, Any] = {
        "name": name,
        "system": f"You are the {name} agent.\nMore text.",
        "engine": engine,
        "adapter": adapter,
        "max_steps": 10,
        "stop_on_finish": True,
        "no_action_retry_limit": 1,
        "step_retries": 0,
        "delegation_id": "deleg-1",
        "publish": (lambda k, p: events.append((k, p))) if events is not None else None,
        "rollout": (lambda k, p: rollout.append((k, p))) if rollout is not None else None,
        "checkpoint": checkpoints.append if checkpoints is not None else None,
    }
    settings.update(overrides)
    return LoopConfig(**settings), engine
