"""RunObserver: everything the host hears of one agent run — the loop's only callbacks.

Contract (what `agents.loop` guarantees an observer):
- `on_step_start(step)` is awaited as each step starts, before the model is asked; a host that
  must store the previous step's records before saying the step started does it here. A pause
  gate halted inside it stops the run before the model is asked.
- `on_event(kind, payload)` gets every event the run publishes (`agent` and `delegation_id`
  added to the payload), in publish order.
- `on_message(message)` gets every message as it joins the history (the task first).
- `on_usage(turn)` gets every model turn the run pays for: the steps' and the compaction
  summaries'.
- `on_activity(kind, payload)` gets the rollout-only record of each tool batch
  (`sub_agent_activity`): for the session's record, not for display.
- `on_error_stop(data)` is called once when the run ends in an error status (not on a finish,
  an answer, the step limit or a pause): the agent, delegation id, step, status, error and the
  loaded tools.
- `before_compact(data)` is awaited before each compaction (the host's `pre_compact` hooks).
The loop does not catch what an observer raises. `QuietObserver` hears nothing; a host
subclasses it and overrides what it needs (in the spirit of openai-agents' `RunHooks`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from yagent.llm import Message
from yagent.llm.types import AssistantTurn

__all__ = ["QuietObserver", "RunObserver"]


class RunObserver(Protocol):
    async def on_step_start(self, step: int) -> None: ...

    def on_event(self, kind: str, payload: Mapping[str, Any]) -> None: ...

    def on_message(self, message: Message) -> None: ...

    def on_usage(self, turn: AssistantTurn) -> None: ...

    def on_activity(self, kind: str, payload: Mapping[str, Any]) -> None: ...

    def on_error_stop(self, data: Mapping[str, Any]) -> None: ...

    async def before_compact(self, data: Mapping[str, Any]) -> None: ...


class QuietObserver:
    """A `RunObserver` that hears nothing; subclass it and override what the host needs."""

    async def on_step_start(self, step: int) -> None:
        return None

    def on_event(self, kind: str, payload: Mapping[str, Any]) -> None:
        return None

    def on_message(self, message: Message) -> None:
        return None

    def on_usage(self, turn: AssistantTurn) -> None:
        return None

    def on_activity(self, kind: str, payload: Mapping[str, Any]) -> None:
        return None

    def on_error_stop(self, data: Mapping[str, Any]) -> None:
        return None

    async def before_compact(self, data: Mapping[str, Any]) -> None:
        return None
