"""Loop overhead per step with an instant scripted model (issue #5): yagent vs three peers.

The conversation, the same for all: `STEPS` steps that each make one `think` call, then one step
that calls `agent_exit`, which ends the run with the tool's result. That is STEPS + 1 model
requests and STEPS + 1 tool calls everywhere; the tools are async and do nothing. The model
answers instantly from a script. Per-step overhead = the run's wall time / (STEPS + 1).

- yagent: `run_agent_loop` configured as `app.assemble` configures the Coding agent (catalog
  definition, its system prompt, the production Surface with the coding profile and deferred tools,
  all built-in executors, an activity `Monitor`, a `PauseGate`, default parallel limit), with the
  `ScriptedEngine`; events, rollout and messages go to in-memory lists instead of SQLite (the peers
  persist nothing either). A second figure, `yagent_two_tools`, gives yagent the same two-tool
  surface as the peers, to separate the cost of a larger tool list (tool_defs and their hash are
  rebuilt every step) from the loop's own.
- LangGraph: `langgraph.prebuilt.create_react_agent` with a `BaseChatModel` subclass answering from
  the script (async, `bind_tools` like a real chat model); `agent_exit` has `return_direct=True`.
- OpenAI Agents SDK: an `Agent` with a custom `Model` returning scripted
  `ResponseFunctionToolCall`s, `tool_use_behavior=StopAtTools(["agent_exit"])`; tracing disabled
  (its default exporter would send traces to OpenAI, which an offline run cannot).
- Pydantic AI: `FunctionModel` returning scripted `ToolCallPart`s; `agent_exit` is the output tool
  (`ToolOutput`).
Every run is checked (all calls made, the exit reached) before its time counts. Runs interleave the
frameworks in a rotating order; figures are medians, and each ratio to yagent is the median of the
per-round ratios of this one run.
The whole comparison runs at 10, 100 and 1 000 steps (`STEP_COUNTS`, fewer runs for longer
conversations); each figure carries `steps` and its name ends in `.<steps>steps`, and
`loop.per_step_growth.<framework>` gives the per-step cost at 1 000 steps over that at 10 (flat
is 1.0; reported, not bounded here).
A peer that cannot be installed or driven prints a JSON line with `"error"`; the script then exits
non-zero after printing every figure it could measure.

The full-app column (issue 17: the same scripted session through `app.assemble` with its SQLite
store, PII, telemetry and checkpoints) belongs in `frameworks` beside "yagent" under the name
`yagent_app`, built by a factory of the same shape as `yagent()`; its `ratio_to_yagent` is then
the full app's cost over the in-memory loop, measured in the same rounds.
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
import warnings
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio

from yagent.agents import catalog
from yagent.agents.activity import Monitor
from yagent.agents.context import system_prompt
from yagent.agents.loop import LoopConfig, run_agent_loop
from yagent.agents.pause import PauseGate
from yagent.agents.results import Status
from yagent.app.config import AgentSettings
from yagent.llm.scripted import ScriptedEngine, call
from yagent.tools import registry
from yagent.tools.adapter import Adapter, ToolContext
from yagent.tools.guard import WorkspaceGuard
from yagent.tools.surface import Surface, SurfaceOptions
from yagent.toolspec import BUILTIN, Profile

STEP_COUNTS = {10: 15, 100: 7, 1000: 3}  # steps -> runs
STEPS = 20  # set per measurement by `measure`
RUNS = 15
TOTAL = STEPS + 1
EXIT_ARGS = {"reason": "done", "summary": "ok"}

Run = Callable[[], Awaitable[None]]  # one timed run; raises when the run went wrong
Prepare = Callable[[], Run]  # builds everything untimed, returns the run


class BenchError(Exception):
    pass


def check(ok: bool, what: str) -> None:
    if not ok:
        raise BenchError(what)


def yagent(workspace: Path, *, two_tools: bool) -> Prepare:
    agent = catalog.builtin("coding", 2)
    settings = AgentSettings()
    tools_profile = (
        Profile("bench", names=frozenset({"think", "agent_exit"})) if two_tools else agent.profile
    )

    def prepare() -> Run:
        surface = Surface(
            BUILTIN,
            tools_profile,
            WorkspaceGuard(workspace),
            options=SurfaceOptions(
                deferred=settings.deferred_tools, schema_budget=settings.schema_budget
            ),
        )
        adapter = Adapter(ToolContext(workspace, surface), registry.executors())
        script = [
            call("think", json.dumps({"thought": f"s{i}"}), call_id=f"c{i}") for i in range(STEPS)
        ]
        script.append(call("agent_exit", json.dumps(EXIT_ARGS), call_id="cx"))
        engine = ScriptedEngine({agent.name: script}, markers={agent.name: "Coding agent"})
        events: list[Any] = []
        cfg = LoopConfig(
            name=agent.name,
            system=system_prompt(agent, workspace=workspace, surface=surface, task="bench"),
            engine=engine,
            adapter=adapter,
            max_steps=max(agent.max_steps, TOTAL),  # the conversation is STEPS + 1 steps
            stop_on_finish=agent.stop_on_finish,
            no_action_retry_limit=agent.no_action_retry_limit,
            step_retries=agent.step_retries,
            no_action_reminder=agent.no_action_reminder,
            parallel_limit=settings.max_parallel_tools,
            publish=lambda k, p: events.append((k, p)),
            rollout=lambda k, p: events.append((k, p)),
            checkpoint=events.append,
            monitor=Monitor(idle=settings.idle_timeout, total=settings.total_timeout),
            pause=PauseGate(),
            on_turn=events.append,
            on_message=events.append,
        )

        async def run() -> None:
            result = await run_agent_loop(cfg, "bench")
            tool_msgs = [m for m in result.messages if m.role == "tool"]
            check(result.status is Status.FINISHED, f"yagent ended {result.status}: {result.error}")
            check(len(tool_msgs) == TOTAL, f"yagent made {len(tool_msgs)} tool calls")
            check(all('"ok": true' in m.content for m in tool_msgs[:-1]), "a think call failed")
            check(result.exit_payload is not None, "yagent has no exit payload")

        return run

    return prepare


def langgraph() -> Prepare:
    from langchain_core.language_models.chat_models import BaseChatModel
    from langchain_core.messages import AIMessage, ToolMessage
    from langchain_core.outputs import ChatGeneration, ChatResult
    from langchain_core.tools import tool
    from langchain_core.utils.function_calling import convert_to_openai_tool
    from langgraph.prebuilt import create_react_agent

    class ScriptedChat(BaseChatModel):
        script: list[AIMessage]
        index: int = 0

        @property
        def _llm_type(self) -> str:
            return "scripted"

        def _generate(
            self, messages: Any, stop: Any = None, run_manager: Any = None, **kw: Any
        ) -> Any:
            raise BenchError("the benchmark drives LangGraph asynchronously")

        async def _agenerate(
            self, messages: Any, stop: Any = None, run_manager: Any = None, **kw: Any
        ) -> Any:
            message = self.script[self.index]
            self.index += 1
            return ChatResult(generations=[ChatGeneration(message=message)])

        def bind_tools(self, tools: Any, **kw: Any) -> Any:
            return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kw)

    @tool
    async def think(thought: str) -> dict[str, Any]:
        """Think; nothing is executed."""
        return {"ok": True}

    @tool(return_direct=True)
    async def agent_exit(reason: str, summary: str = "") -> dict[str, Any]:
        """Finish the run."""
        return {"finished": True, "reason": reason, "summary": summary}

    def prepare() -> Run:
        script = [
            AIMessage(
                "", tool_calls=[{"name": "think", "args": {"thought": f"s{i}"}, "id": f"c{i}"}]
            )
            for i in range(STEPS)
        ]
        script.append(
            AIMessage("", tool_calls=[{"name": "agent_exit", "args": EXIT_ARGS, "id": "cx"}])
        )
        model = ScriptedChat(script=script)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # create_react_agent's own deprecation notice
            graph = create_react_agent(
                model, [think, agent_exit], prompt="You are the bench agent."
            )

        async def run() -> None:
            out = await graph.ainvoke(
                {"messages": [("user", "bench")]}, {"recursion_limit": 4 * TOTAL + 10}
            )
            tool_msgs = [m for m in out["messages"] if isinstance(m, ToolMessage)]
            check(model.index == TOTAL, f"LangGraph asked the model {model.index} times")
            check(len(tool_msgs) == TOTAL, f"LangGraph made {len(tool_msgs)} tool calls")
            check('"finished": true' in str(tool_msgs[-1].content), "LangGraph did not exit")

        return run

    return prepare


def openai_agents() -> Prepare:
    from agents.items import ToolCallOutputItem
    from openai.types.responses import ResponseFunctionToolCall

    from agents import (
        Agent,
        Model,
        ModelResponse,
        Runner,
        StopAtTools,
        Usage,
        function_tool,
        set_tracing_disabled,
    )

    set_tracing_disabled(True)

    class ScriptedModel(Model):
        def __init__(self, script: list[tuple[str, dict[str, Any], str]]) -> None:
            self.script = script
            self.index = 0

        async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
            name, arguments, call_id = self.script[self.index]
            self.index += 1
            item = ResponseFunctionToolCall(
                arguments=json.dumps(arguments),
                call_id=call_id,
                name=name,
                type="function_call",
                id=f"fc_{call_id}",
                status="completed",
            )
            return ModelResponse(output=[item], usage=Usage(), response_id=None)

        def stream_response(self, *args: Any, **kwargs: Any) -> Any:
            raise BenchError("the benchmark does not stream")

    @function_tool
    async def think(thought: str) -> dict[str, Any]:
        """Think; nothing is executed."""
        return {"ok": True}

    @function_tool
    async def agent_exit(reason: str, summary: str = "") -> dict[str, Any]:
        """Finish the run."""
        return {"finished": True, "reason": reason, "summary": summary}

    def prepare() -> Run:
        script = [("think", {"thought": f"s{i}"}, f"c{i}") for i in range(STEPS)]
        script.append(("agent_exit", EXIT_ARGS, "cx"))
        model = ScriptedModel(script)
        agent = Agent(
            name="bench",
            instructions="You are the bench agent.",
            model=model,
            tools=[think, agent_exit],
            tool_use_behavior=StopAtTools(stop_at_tool_names=["agent_exit"]),
        )

        async def run() -> None:
            result = await Runner.run(agent, "bench", max_turns=TOTAL + 5)
            outputs = [i for i in result.new_items if isinstance(i, ToolCallOutputItem)]
            check(model.index == TOTAL, f"Agents SDK asked the model {model.index} times")
            check(len(outputs) == TOTAL, f"Agents SDK made {len(outputs)} tool calls")
            # StopAtTools makes the exit tool's output the final output (the SDK stringifies it).
            check("'finished': True" in str(result.final_output), "Agents SDK did not exit")

        return run

    return prepare


def pydantic_ai() -> Prepare:
    from pydantic import BaseModel
    from pydantic_ai import Agent, ToolOutput
    from pydantic_ai.messages import ModelResponse, ToolCallPart, ToolReturnPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    class Exit(BaseModel):
        reason: str
        summary: str = ""

    def prepare() -> Run:
        asked = 0

        def model_fn(messages: Any, info: AgentInfo) -> ModelResponse:
            nonlocal asked
            asked += 1
            if asked <= STEPS:
                part = ToolCallPart("think", {"thought": f"s{asked}"}, f"c{asked}")
            else:
                part = ToolCallPart("agent_exit", dict(EXIT_ARGS), "cx")
            return ModelResponse(parts=[part])

        agent = Agent(
            FunctionModel(model_fn),
            instructions="You are the bench agent.",
            output_type=ToolOutput(Exit, name="agent_exit"),
        )

        @agent.tool_plain
        async def think(thought: str) -> dict[str, Any]:
            """Think; nothing is executed."""
            return {"ok": True}

        async def run() -> None:
            result = await agent.run("bench")
            returns = [
                p
                for m in result.all_messages()
                for p in getattr(m, "parts", ())
                if isinstance(p, ToolReturnPart)
            ]
            check(asked == TOTAL, f"Pydantic AI asked the model {asked} times")
            check(len(returns) == TOTAL, f"Pydantic AI returned {len(returns)} tool results")
            check(isinstance(result.output, Exit), "Pydantic AI did not exit")

        return run

    return prepare


PEERS: dict[str, tuple[str, Callable[[], Prepare]]] = {
    "langgraph": ("langgraph, langchain-core", langgraph),
    "openai_agents": ("openai-agents", openai_agents),
    "pydantic_ai": ("pydantic-ai-slim", pydantic_ai),
}


async def timed(prepare: Prepare) -> float:
    run = prepare()
    start = time.perf_counter()
    await run()
    return time.perf_counter() - start


async def main() -> int:
    failed = 0
    per_step: dict[int, dict[str, float]] = {}
    for steps, runs in STEP_COUNTS.items():
        code, per_step[steps] = await measure(steps, runs)
        failed |= code
    first, last = min(per_step), max(per_step)
    for name, value in per_step[last].items():
        if name in per_step[first] and per_step[first][name] > 0:
            growth = round(value / per_step[first][name], 2)
            print(
                json.dumps(
                    {
                        "name": f"loop.per_step_growth.{name}",
                        "value": growth,
                        "unit": f"x ({last} steps over {first})",
                    }
                ),
                flush=True,
            )
    return failed


async def measure(steps: int, runs: int) -> tuple[int, dict[str, float]]:
    """One comparison at `steps` steps; returns the exit code and yagent's-and-peers' us/step."""
    global STEPS, TOTAL, RUNS
    STEPS, TOTAL, RUNS = steps, steps + 1, runs
    errors: dict[str, str] = {}
    frameworks: dict[str, Prepare] = {}
    with tempfile.TemporaryDirectory(prefix="yagent-bench-loop-") as tmp:
        workspace = Path(tmp)
        frameworks["yagent"] = yagent(workspace, two_tools=False)
        frameworks["yagent_two_tools"] = yagent(workspace, two_tools=True)
        for name, (package, factory) in PEERS.items():
            try:
                frameworks[name] = factory()
                await timed(frameworks[name])  # warm-up; also proves it can be driven
            except ImportError as exc:
                errors[name] = f"not installed ({exc}); pip install '.[bench]' ({package})"
            except Exception as exc:
                errors[name] = f"could not be driven offline: {type(exc).__name__}: {exc}"
            if name in errors:
                frameworks.pop(name, None)
        try:
            await timed(frameworks["yagent"])
            await timed(frameworks["yagent_two_tools"])
        except Exception as exc:
            print(f"bench_loop: yagent run failed: {type(exc).__name__}: {exc}", file=sys.stderr)
            return 1, {}
        names = list(frameworks)
        samples: dict[str, list[float]] = {n: [] for n in names}
        for r in range(RUNS):
            order = names[r % len(names) :] + names[: r % len(names)]
            for name in order:
                samples[name].append(await timed(frameworks[name]))
    per_step = {n: statistics.median(s) / TOTAL * 1e6 for n, s in samples.items()}
    # Paired: each round times every framework back to back, so a burst of load from other work
    # on the machine hits a round's runs alike; the ratio is the median of the rounds' ratios.
    ratio = {
        n: statistics.median(a / b for a, b in zip(s, samples["yagent"], strict=True))
        for n, s in samples.items()
    }
    for name in [*names, *errors]:
        fig: dict[str, Any] = {
            "name": f"loop.per_step_overhead.{name}.{STEPS}steps",
            "unit": "us/step",
        }
        if name in errors:
            fig["error"] = errors[name]
        else:
            fig["value"] = round(per_step[name], 1)
            fig["ratio_to_yagent"] = round(ratio[name], 2)
            fig["run_ms_median"] = round(statistics.median(samples[name]) * 1000, 2)
        fig.update({"steps": TOTAL, "tool_calls": TOTAL, "runs": RUNS})
        print(json.dumps(fig), flush=True)
    if errors:
        print(f"bench_loop: peers not measured: {', '.join(errors)}", file=sys.stderr)
        return 1, per_step
    return 0, per_step


if __name__ == "__main__":
    sys.exit(anyio.run(main))
