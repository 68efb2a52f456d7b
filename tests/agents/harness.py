"""A production-shaped harness for loop tests: the real surface, adapter, flow executors."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import anyio

from yagent.agents.loopconfig import LoopConfig
from yagent.agents.observer import QuietObserver
from yagent.llm.scripted import ScriptedEngine, Step
from yagent.llm.types import AssistantTurn
from yagent.tools import flow
from yagent.tools.adapter import Adapter, Executor, ToolContext
from yagent.tools.guard import WorkspaceGuard
from yagent.tools.surface import Surface, SurfaceOptions
from yagent.toolspec import Effect, Spec, Tier
from yagent.toolspec.builtin import BUILTIN
from yagent.toolspec.profiles import profile

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


Note = Callable[[str, Mapping[str, Any]], None]


class ListObserver(QuietObserver):
    """The loop's observer in tests: what the host would hear, in lists and callables."""

    def __init__(
        self,
        *,
        publish: Note | None = None,
        rollout: Note | None = None,
        checkpoint: Callable[[Mapping[str, Any]], None] | None = None,
        on_turn: Callable[[AssistantTurn], None] | None = None,
        on_step: Callable[[int], Awaitable[None]] | None = None,
        before_compact: Callable[[Mapping[str, Any]], Awaitable[None]] | None = None,
    ) -> None:
        self.publish, self.rollout, self.checkpoint = publish, rollout, checkpoint
        self.on_turn, self.on_step, self.compacting = on_turn, on_step, before_compact

    async def on_step_start(self, step: int) -> None:
        if self.on_step is not None:
            await self.on_step(step)

    def on_event(self, kind: str, payload: Mapping[str, Any]) -> None:
        if self.publish is not None:
            self.publish(kind, payload)

    def on_usage(self, turn: AssistantTurn) -> None:
        if self.on_turn is not None:
            self.on_turn(turn)

    def on_activity(self, kind: str, payload: Mapping[str, Any]) -> None:
        if self.rollout is not None:
            self.rollout(kind, payload)

    def on_error_stop(self, data: Mapping[str, Any]) -> None:
        if self.checkpoint is not None:
            self.checkpoint(data)

    async def before_compact(self, data: Mapping[str, Any]) -> None:
        if self.compacting is not None:
            await self.compacting(data)


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
    }
    heard: dict[str, Any] = {
        "publish": (lambda k, p: events.append((k, p))) if events is not None else None,
        "rollout": (lambda k, p: rollout.append((k, p))) if rollout is not None else None,
        "checkpoint": checkpoints.append if checkpoints is not None else None,
    }
    for key in ("publish", "on_turn", "on_step", "before_compact"):  # what a test listens to
        if key in overrides:
            heard[key] = overrides.pop(key)
    settings["observer"] = ListObserver(**heard)
    settings.update(overrides)
    return LoopConfig(**settings), engine
