"""Tool timeouts through the loop (issue 14, item 2): the loop's limit is a backstop above each
tool's own declared bound, and a person's approval time never counts against a tool.

Real surface, adapter, judgement ring and run_bash (a real bash process group); the model is the
scripted engine.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.agents.harness import build
from yagent.agents.loop import run_agent_loop
from yagent.agents.results import Status
from yagent.llm.scripted import call
from yagent.messaging import Dispatcher
from yagent.tools import bash, flow, shell
from yagent.tools.adapter import Adapter, Executor, ToolContext
from yagent.tools.confirm import Answer, Scope, UserConfirm
from yagent.tools.guard import WorkspaceGuard
from yagent.tools.surface import Surface, SurfaceOptions
from yagent.toolspec import Effect, Spec, Tier
from yagent.toolspec.builtin import BUILTIN
from yagent.toolspec.params import RUN_BASH_TIMEOUT
from yagent.toolspec.profiles import profile


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return tmp_path


EXIT = json.dumps({"reason": "done", "summary": "done"})
ASKS = Spec(
    "lab__asks",
    "Needs a person's approval, then works a little.",
    {"type": "object"},
    Effect.EXEC,
    Tier.HOT,
    always_authorize="a lab tool that always asks",
)
BOUNDED = Spec(
    "lab__bounded",
    "Waits on its own declared bound.",
    {"type": "object"},
    Effect.EXEC,
    Tier.HOT,
    own_timeout=lambda args: float(args.get("seconds", 0)),
)


class SlowPerson(UserConfirm):
    """Approves every question after `delay` seconds (a person thinking it over)."""

    def __init__(self, delay: float) -> None:
        super().__init__(Dispatcher())
        self.delay = delay
        self.asked = 0

    async def ask(
        self,
        kind: str,
        payload: Mapping[str, Any],
        *,
        request_id: str = "",
        delegation_id: str = "",
    ) -> Answer:
        self.asked += 1
        await anyio.sleep(self.delay)
        return Answer(request_id or "q", True, scope=Scope.ONCE)


async def works_a_little(ctx: ToolContext, args: Any) -> dict[str, Any]:
    await anyio.sleep(0.2)
    return {"worked": True}


async def waits(ctx: ToolContext, args: Any) -> dict[str, Any]:
    await anyio.sleep(float(args["seconds"]) / 2)
    return {"waited": True}


def loop_with(ws: Path, steps: list[Any], confirm: UserConfirm | None, **over: Any) -> Any:
    events: list[tuple[str, Mapping[str, Any]]] = []
    cfg, _ = build(ws, steps, events=events, **over)
    surface = Surface(
        BUILTIN,
        profile("coding"),
        WorkspaceGuard(ws),
        external=[ASKS, BOUNDED],
        options=SurfaceOptions(deferred=False),
    )
    executors: dict[str, Executor] = {
        "agent_exit": flow.agent_exit,
        "run_bash": bash.run_bash,
        ASKS.name: works_a_little,
        BOUNDED.name: waits,
    }
    cfg.adapter = Adapter(ToolContext(ws, surface, confirm=confirm), executors)
    return cfg, events


def result_of(events: list[tuple[str, Mapping[str, Any]]], name: str) -> Mapping[str, Any]:
    return next(p for k, p in events if k == "tool_result" and p["name"] == name)


@pytest.mark.anyio
async def test_run_bash_timeout_above_the_loop_limit_is_its_own_with_partial_output(
    ws: Path,
) -> None:
    command = "printf 'partial-output\\n'; sleep 30"
    args = json.dumps({"command": command, "timeout": 1.5})
    cfg, events = loop_with(
        ws, [call("run_bash", args), call("agent_exit", EXIT)], SlowPerson(0), tool_timeout=0.5
    )
    result = await run_agent_loop(cfg, "t")
    assert result.status is Status.FINISHED
    ran = result_of(events, "run_bash")
    body = json.loads(ran["content"])
    assert body.get("receipt") == "timeout", body
    assert "partial-output" in body["text"], "the partial output reaches the model"
    assert "is_background" in body["text"], "with the advice to run it in the background"
    assert "1.5s timeout" in body["text"], "the model's own timeout was honoured, not cut"


@pytest.mark.anyio
async def test_a_slow_approval_does_not_eat_the_tools_time(ws: Path) -> None:
    person = SlowPerson(0.8)
    cfg, events = loop_with(
        ws, [call(ASKS.name), call("agent_exit", EXIT)], person, tool_timeout=0.5
    )
    result = await run_agent_loop(cfg, "t")
    assert result.status is Status.FINISHED
    assert person.asked == 1
    done = result_of(events, ASKS.name)
    assert done["ok"], done["content"]
    assert json.loads(done["content"]) == {"worked": True}


@pytest.mark.anyio
async def test_the_backstop_still_stops_an_execution_past_it(ws: Path) -> None:
    cfg, events = loop_with(
        ws,
        [call(ASKS.name), call("agent_exit", EXIT)],
        SlowPerson(0),
        tool_timeout=0.05,
    )
    await run_agent_loop(cfg, "t")
    stopped = result_of(events, ASKS.name)
    assert stopped["kind"] == "timeout"
    assert "did not finish within 0.05s" in json.loads(stopped["content"])["error"]


@pytest.mark.anyio
async def test_a_declared_bound_raises_the_backstop(ws: Path) -> None:
    args = json.dumps({"seconds": 0.6})
    cfg, events = loop_with(
        ws, [call(BOUNDED.name, args), call("agent_exit", EXIT)], None, tool_timeout=0.1
    )
    await run_agent_loop(cfg, "t")
    done = result_of(events, BOUNDED.name)
    assert done["ok"], done["content"]


def test_run_bash_declares_the_shells_own_default() -> None:
    spec = next(s for s in BUILTIN if s.name == "run_bash")
    assert shell.DEFAULT_TIMEOUT == RUN_BASH_TIMEOUT, "one default, declared where it is used"
    assert spec.own_timeout is not None
    assert spec.own_timeout({"command": "x"}) == RUN_BASH_TIMEOUT
    assert spec.own_timeout({"command": "x", "timeout": 600}) == 600
    assert spec.own_timeout({"command": "x", "is_background": True}) is None
    assert spec.execution_limit({"command": "x", "timeout": 600}, 180.0) == 630.0
    assert spec.execution_limit({"command": "x"}, 180.0) == 210.0
    assert spec.execution_limit({"command": "x"}, None) is None
