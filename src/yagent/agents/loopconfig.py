"""LoopConfig: what one agent's run of the shared loop (`agents.loop`) is given.

Per-agent settings and the host's one `RunObserver` (`agents.observer`: every event, message,
model turn, step start, batch record, error stop and compaction reaches the host through it —
there are no other callbacks). The behaviour flags (`stop_on_finish`,
`no_action_retry_limit`, `step_retries`) have no central default: each agent sets them.
`DEFAULT_TOOL_TIMEOUT` is the backstop on one tool execution when `tool_timeout` is None (a
module seam tests shorten); `GENERIC_REMINDER` is what a plain-text reply is answered with when
the agent has no reminder of its own.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from yagent.agents.activity import Monitor
from yagent.agents.economy import Archive, ContextSettings
from yagent.agents.observer import QuietObserver, RunObserver
from yagent.agents.pause import PauseGate
from yagent.llm.types import Engine
from yagent.tools.adapter import Adapter

__all__ = ["DEFAULT_TOOL_TIMEOUT", "GENERIC_REMINDER", "LoopConfig"]

# The backstop on one tool execution, in seconds (tests shorten it). It never covers the judgement
# or a person's approval, and a tool's own declared bound raises it (`Spec.execution_limit`).
DEFAULT_TOOL_TIMEOUT = 180.0
GENERIC_REMINDER = (
    "You replied without calling a tool. Keep working: explore the code, make the edit, run the "
    "relevant command or tests, verify the result — and call agent_exit when the task is done."
)


@dataclass
class LoopConfig:
    """Per-agent settings. The behaviour flags have no central default: each agent sets them."""

    name: str
    system: str
    engine: Engine
    adapter: Adapter
    max_steps: int
    stop_on_finish: bool
    no_action_retry_limit: int
    step_retries: int
    no_action_reminder: str | None = None
    parallel_limit: int = 4
    tool_timeout: float | None = None  # None: DEFAULT_TOOL_TIMEOUT (the module seam)
    delegation_id: str = ""
    observer: RunObserver = field(default_factory=QuietObserver)
    monitor: Monitor | None = None
    pause: PauseGate | None = None
    monitor_interval: float = 0.5
    start_step: int = 0
    context: ContextSettings | None = None  # None: no context economy (no metering, no spill)
    archive: Archive | None = None  # keeps what compaction removes; returns a reference
