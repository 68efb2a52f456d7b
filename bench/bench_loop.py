"""Loop overhead per step with an instant scripted model (issue #5): yagent vs three peers.

The conversation, the same for all: `STEPS` steps that each make one `think` call, then one step
that calls `agent_exit`, which ends the run with the tool's result. That is STEPS + 1 model
requests and STEPS + 1 tool calls everywhere; the tools are async and do nothing. The model
answers instantly from a script. Per-step overhead = the run's CPU time (the process's, every
thread: `clock`) / (STEPS + 1); each figure also carries the run's wall time (`wall_ms_median`).

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

The full-app column `yagent_app` (issue 17) runs the same scripted session through `App.run`
(`app.assemble`, one App per step count in a temporary home): the SQLite session store, pii on
every event, telemetry, the durable checkpoints and the run's lease — all real; only the agent's
step limit is raised to fit the conversation, as for the loop above. Its `ratio_to_yagent` is the
full app's cost over the in-memory loop in the same rounds, bounded: `loop.app_over_loop.<n>steps`
≤ 2. `loop.decile_growth.<framework>.<n>steps` is the time of a run's last tenth of steps over its
first tenth (median of the runs; flat is 1.0), bounded ≤ 1.1 for the full app at 1 000 steps.
A step runs from its model request to the next one; the last step ends when the run has returned
(its end — closing the run, the app's session bookkeeping — is in the last tenth), before the
benchmark checks the run. `loop.run_end.<framework>.<n>steps` reports that end alone: the CPU
from the run's `run_end` event until it returned (median of the runs, reported, not bounded).
`store.growth_per_step` is what `sessions.db` grows by per step (pages in use, after a WAL
checkpoint) of a session whose steps each read a 1.9 KB file, over the bytes of those steps'
messages (compact JSON): bounded ≤ 1.5.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import json
import sqlite3
import statistics
import sys
import tempfile
import time
import warnings
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio

from benchlib import Report
from yagent.agents import catalog
from yagent.agents.activity import Monitor
from yagent.agents.context import system_prompt
from yagent.agents.loop import run_agent_loop
from yagent.agents.loopconfig import LoopConfig
from yagent.agents.observer import QuietObserver
from yagent.agents.pause import PauseGate
from yagent.agents.results import Status
from yagent.app.assemble import App, open_app
from yagent.app.config import AgentSettings, load
from yagent.llm.scripted import ScriptedEngine, call
from yagent.memory import message_body
from yagent.messaging import LINGER
from yagent.tools import registry
from yagent.tools.adapter import Adapter, ToolContext
from yagent.tools.guard import WorkspaceGuard
from yagent.tools.surface import Surface, SurfaceOptions
from yagent.toolspec.builtin import BUILTIN
from yagent.toolspec.profiles import Profile

STEP_COUNTS = {10: 15, 100: 7, 1000: 3}  # steps -> runs
STEPS = 20  # set per measurement by `measure`
RUNS = 15
TOTAL = STEPS + 1
EXIT_ARGS = {"reason": "done", "summary": "ok"}

Run = Callable[[], Awaitable[None]]  # one timed run; raises when the run went wrong
Prepare = Callable[[], Run]  # builds everything untimed, returns the run
APP_OVER_LOOP = 2.0  # bound: the full app's per-step cost over the in-memory loop's
DECILE_GROWTH = 1.1  # bound at 1 000 steps: last tenth of the steps over the first tenth
STORE_GROWTH = 1.5  # bound: sessions.db growth per step over the bytes of the step's messages
REPORT = Report()
STARTS: dict[str, list[list[float]]] = {}  # per framework, per run: when each step began
RUN_ENDS: dict[str, list[float]] = {}  # per framework, per run: `run_end` event -> run returned
WALL: dict[str, list[float]] = {}  # per framework: each run's wall time (reported beside CPU)
NAMES: dict[int, str] = {}  # id(prepare) -> framework name, for WALL


def clock() -> float:
    """What a run costs: the process's CPU time (every thread), not wall time — on a shared
    machine wall time measures the scheduler as much as the code; waits for the disk are not
    CPU, and are reported through the wall figures (`wall_ms_median`) beside it."""
    return time.process_time()


def _name_of(prepare: Any) -> str:
    return NAMES.get(id(prepare), "?")


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
        name = "yagent_two_tools" if two_tools else "yagent"
        starts, ended = _starts(name), []

        class Record(QuietObserver):
            """Keeps what the app would store, in memory."""

            def on_event(self, kind: str, payload: Any) -> None:
                if kind == "model_request":
                    starts.append(clock())
                elif kind == "run_end":
                    ended.append(clock())
                events.append((kind, payload))

            def on_message(self, message: Any) -> None:
                events.append(message)

            def on_usage(self, turn: Any) -> None:
                events.append(turn)

            def on_activity(self, kind: str, payload: Any) -> None:
                events.append((kind, payload))

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
            observer=Record(),
            monitor=Monitor(idle=settings.idle_timeout, total=settings.total_timeout),
            pause=PauseGate(),
        )

        async def run() -> None:
            result = await run_agent_loop(cfg, "bench")
            starts.append(clock())  # the run's end, before this benchmark's own checks
            RUN_ENDS.setdefault(name, []).append(starts[-1] - ended[-1])
            tool_msgs = [m for m in result.messages if m.role == "tool"]
            check(result.status is Status.FINISHED, f"yagent ended {result.status}: {result.error}")
            check(len(tool_msgs) == TOTAL, f"yagent made {len(tool_msgs)} tool calls")
            check(all('"ok": true' in m.content for m in tool_msgs[:-1]), "a think call failed")
            check(result.exit_payload is not None, "yagent has no exit payload")

        return run

    return prepare


def _starts(name: str) -> list[float]:
    """A fresh list of step start times for one run of `name` (its end appended last)."""
    runs = STARTS.setdefault(name, [])
    runs.append([])
    return runs[-1]


def decile_growth(starts: list[float]) -> float:
    """The last tenth of a run's steps over its first tenth (at least one step each)."""
    spans = [b - a for a, b in itertools.pairwise(starts)]
    tenth = max(len(spans) // 10, 1)
    first, last = sum(spans[:tenth]), sum(spans[-tenth:])
    return last / first if first > 0 else float("inf")


def _bench_agent(app: App, steps: int) -> None:
    """The Coding agent as the app builds it, its step limit raised to fit the conversation.
    Each run wraps the App's own lookup (`App.agent`), not the previous run's wrapper: wrapped
    again per run, the k-th run paid k nested lookups (issue 17's seventh pass)."""

    def agent(name: str) -> catalog.AgentDef:
        found = App.agent(app, name)
        return dataclasses.replace(found, max_steps=max(found.max_steps, steps))

    app.agent = agent  # type: ignore[method-assign]


def yagent_app(app: App) -> Prepare:
    """The same session through the real App: SQLite store, pii, telemetry, checkpoints."""
    name = catalog.builtin("coding", 2).name

    def prepare() -> Run:
        script = [
            call("think", json.dumps({"thought": f"s{i}"}), call_id=f"c{i}") for i in range(STEPS)
        ]
        script.append(call("agent_exit", json.dumps(EXIT_ARGS), call_id="cx"))
        app.engine = ScriptedEngine({name: script}, markers={name: "Coding agent"})
        _bench_agent(app, TOTAL)
        starts, ended = _starts("yagent_app"), []

        def observe(event: Any) -> None:
            if event.type == "model_request":
                starts.append(clock())
            elif event.type == "run_end":
                ended.append(clock())

        async def run() -> None:
            app.observers.append(observe)
            try:
                session_id, result = await _shown(app, app.run("bench", agent_name=name))
            finally:
                app.observers.remove(observe)
            starts.append(clock())
            RUN_ENDS.setdefault("yagent_app", []).append(starts[-1] - ended[-1])
            check(result.status is Status.FINISHED, f"app ended {result.status}: {result.error}")
            tool_msgs = [m for m in result.messages if m.role == "tool"]
            check(len(tool_msgs) == TOTAL, f"the app made {len(tool_msgs)} tool calls")
            check(len(app.store.tool_calls(session_id)) == TOTAL, "the store lacks tool calls")

        return run

    return prepare


async def _shown(app: App, work: Awaitable[Any]) -> Any:
    """`work`'s result, the app's events consumed meanwhile as the terminal's pump does
    (`cli.render`): woken by a burst's first event, drained after `messaging.LINGER`."""

    async def consume() -> None:
        while True:
            await app.dispatcher.ready(LINGER)
            while app.dispatcher.next_in_order() is not None:
                pass

    async with anyio.create_task_group() as tg:
        tg.start_soon(consume)
        result = await work
        tg.cancel_scope.cancel()
    while app.dispatcher.receive_nowait() is not None:
        pass
    return result


def _used_bytes(path: Path) -> int:
    conn = sqlite3.connect(path)
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        pages, free, size = (
            conn.execute(f"PRAGMA {name}").fetchone()[0]
            for name in ("page_count", "freelist_count", "page_size")
        )
    finally:
        conn.close()
    return int((pages - free) * size)


async def store_growth(app: App, workspace: Path, steps: int = 100) -> None:
    """sessions.db growth per step over the bytes of the step's messages (1.9 KB tool output)."""
    lines = (f"line {n:03d} of a file the agent reads again and again\n" for n in range(34))
    (workspace / "a.txt").write_text("".join(lines))
    name = catalog.builtin("coding", 2).name
    script = [
        call("read_file", json.dumps({"path": "a.txt"}), call_id=f"r{i}") for i in range(steps)
    ]
    script.append(call("agent_exit", json.dumps(EXIT_ARGS), call_id="rx"))
    app.engine = ScriptedEngine({name: script}, markers={name: "Coding agent"})
    _bench_agent(app, steps + 1)
    before = _used_bytes(app.store.path)
    session_id, result = await _shown(app, app.run("read it", agent_name=name))
    grown = _used_bytes(app.store.path) - before
    check(result.status is Status.FINISHED, f"app ended {result.status}: {result.error}")
    bodies = [message_body(m) for m in app.store.messages(session_id)]
    text = sum(len(json.dumps(b, ensure_ascii=False, separators=(",", ":"))) for b in bodies)
    REPORT.figure(
        "store.growth_per_step",
        round(grown / text, 3),
        "x (sessions.db bytes / message bytes)",
        bound=STORE_GROWTH,
        db_bytes_per_step=round(grown / (steps + 1)),
        message_bytes_per_step=round(text / (steps + 1)),
        steps=steps + 1,
    )


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
    start, wall = clock(), time.perf_counter()
    await run()
    WALL.setdefault(_name_of(prepare), []).append(time.perf_counter() - wall)
    return clock() - start


async def main() -> int:
    failed = 0
    per_step: dict[int, dict[str, float]] = {}
    for steps, runs in STEP_COUNTS.items():
        code, per_step[steps] = await measure(steps, runs)
        failed |= code
    with tempfile.TemporaryDirectory(prefix="yagent-bench-store-") as tmp:
        home, workspace = Path(tmp) / "home", Path(tmp) / "ws"
        workspace.mkdir()
        async with _open_app(home, workspace) as app:
            await store_growth(app, workspace)
    failed |= REPORT.exit_code()
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
    STARTS.clear()
    RUN_ENDS.clear()
    with tempfile.TemporaryDirectory(prefix="yagent-bench-loop-") as tmp:
        workspace = Path(tmp) / "ws"
        workspace.mkdir()
        stack = contextlib.AsyncExitStack()  # the App stays open for every run of this count
        frameworks["yagent"] = yagent(workspace, two_tools=False)
        frameworks["yagent_two_tools"] = yagent(workspace, two_tools=True)
        app = await stack.enter_async_context(_open_app(Path(tmp) / "home", workspace))
        frameworks["yagent_app"] = yagent_app(app)
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
            for own in ("yagent", "yagent_two_tools", "yagent_app"):
                await timed(frameworks[own])  # warm-up
        except Exception as exc:
            print(f"bench_loop: yagent run failed: {type(exc).__name__}: {exc}", file=sys.stderr)
            await stack.aclose()
            return 1, {}
        names = list(frameworks)
        NAMES.clear()
        NAMES.update({id(frameworks[n]): n for n in names})
        WALL.clear()
        samples: dict[str, list[float]] = {n: [] for n in names}
        for r in range(RUNS):
            order = names[r % len(names) :] + names[: r % len(names)]
            for name in order:
                samples[name].append(await timed(frameworks[name]))
        await stack.aclose()
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
            fig["wall_ms_median"] = round(statistics.median(WALL[name]) * 1000, 2)
        fig.update({"steps": TOTAL, "tool_calls": TOTAL, "runs": RUNS})
        print(json.dumps(fig), flush=True)
    if "yagent_app" in ratio:
        REPORT.figure(
            f"loop.app_over_loop.{STEPS}steps",
            round(ratio["yagent_app"], 2),
            "x (full app / in-memory loop, median of paired rounds)",
            bound=APP_OVER_LOOP,
            steps=TOTAL,
            runs=RUNS,
        )
    for name in ("yagent", "yagent_app"):
        growth = [decile_growth(run) for run in STARTS.get(name, [])[1:] if len(run) > 2]
        if growth:  # the first run of each is the warm-up
            bounded = name == "yagent_app" and STEPS >= 1000
            REPORT.figure(
                f"loop.decile_growth.{name}.{STEPS}steps",
                round(statistics.median(growth), 3),
                "x (last tenth of the steps / first tenth)",
                bound=DECILE_GROWTH if bounded else None,
                steps=TOTAL,
                runs=len(growth),
            )
        ends = RUN_ENDS.get(name, [])[1:]
        if ends:
            REPORT.figure(
                f"loop.run_end.{name}.{STEPS}steps",
                round(statistics.median(ends) * 1e6),
                "us (CPU from the run_end event until the run returned)",
                steps=TOTAL,
                runs=len(ends),
            )
    if errors:
        print(f"bench_loop: peers not measured: {', '.join(errors)}", file=sys.stderr)
        return 1, per_step
    return 0, per_step


def _open_app(home: Path, workspace: Path) -> contextlib.AbstractAsyncContextManager[App]:
    """An App in a temporary home; each run gives it its scripted engine."""
    config = load(home=home, workspace=workspace, env={})
    engine = ScriptedEngine({})
    return open_app(config, home=home, workspace=workspace, interactive=False, engine=engine)


if __name__ == "__main__":
    sys.exit(anyio.run(main))
