"""Tokens sent over a long scripted session, with and without the context economy (issue #6).

The session, the same for both: the Coding agent as `app.assemble` configures it (catalog
definition, system prompt, production Surface with deferred tools), `STEPS` steps that each read
a large tool output (`OUTPUT_CHARS` characters of log-like text, as a test run or a big file
read produces), two of them the same base64 image, then `agent_exit`. The model answers
instantly from a script (the summariser too). Tokens are the economy's own estimate
(`budget.approx_tokens`: 4 characters a token) of everything each request carries: system
prompt, tool definitions, messages — summariser requests included on the economy side.

- without: `LoopConfig.context = None` — the history is sent as it grows.
- with: the app's economy (`app.economy.context_settings`) at a `WINDOW`-token window: outputs
  above `MAX_OUTPUT` characters spilled, the image offloaded after its first sighting,
  compaction at 80 % of the room.
Figures (JSON lines): total tokens sent each way and their ratio, the largest single request
each way against the window, and how many compactions, spills and offloads it took. Every run is
checked (all steps made, the exit reached, the economy's requests within the window).
"""

from __future__ import annotations

import base64
import json
import random
import sys
import tempfile
from pathlib import Path
from typing import Any

import anyio

from yagent.agents import catalog
from yagent.agents.context import system_prompt
from yagent.agents.loop import LoopConfig, run_agent_loop
from yagent.agents.results import Status
from yagent.app import economy
from yagent.app.config import Config
from yagent.kernel.budget import approx_tokens
from yagent.llm import Request
from yagent.llm.scripted import ScriptedEngine, call, say
from yagent.tools import registry
from yagent.tools.adapter import Adapter, ToolContext
from yagent.tools.guard import WorkspaceGuard
from yagent.tools.surface import Surface, SurfaceOptions
from yagent.toolspec import BUILTIN

STEPS = 80
OUTPUT_CHARS = 12_000
WINDOW = 32_000
MAX_OUTPUT = 8_000
IMAGE_STEPS = (20, 21)


class BenchError(Exception):
    pass


def request_tokens(request: Request) -> int:
    tools = approx_tokens(json.dumps(list(request.tools), sort_keys=True))
    messages = sum(
        approx_tokens(m.content) + sum(approx_tokens(c.arguments) for c in m.tool_calls)
        for m in request.messages
    )
    return approx_tokens(request.system) + tools + messages


async def session(workspace: Path, state: Path, *, with_economy: bool) -> dict[str, Any]:
    agent = catalog.builtin("coding", 0)
    rng = random.Random(6)
    image = "data:image/png;base64," + base64.b64encode(rng.randbytes(24_000)).decode()

    async def read_log(ctx: ToolContext, args: Any) -> dict[str, Any]:
        elapsed = rng.randrange(999)
        line = f"{rng.randrange(10**6):06d} INFO worker processed batch ok elapsed=0.{elapsed}s\n"
        if "image" in str(args.path):
            return {"path": args.path, "content": image}
        return {
            "path": args.path,
            "content": (line * (OUTPUT_CHARS // len(line) + 1))[:OUTPUT_CHARS],
        }

    surface = Surface(
        BUILTIN, agent.profile, WorkspaceGuard(workspace), options=SurfaceOptions(deferred=True)
    )
    config = Config.model_validate(
        {"agent": {"context_window": WINDOW, "max_tool_output": MAX_OUTPUT}}
    )
    context = economy.context_settings(config, state_dir=state, session_id="bench")
    executors = registry.executors()
    executors["read_file"] = read_log
    ctx = ToolContext(workspace, surface, session_id="bench", spill=context.spill)
    script: list[Any] = [
        call(
            "read_file",
            json.dumps({"path": "image.png" if i in IMAGE_STEPS else f"logs/run{i}.log"}),
            call_id=f"c{i}",
        )
        for i in range(STEPS)
    ]
    script.append(call("agent_exit", json.dumps({"reason": "done", "summary": "ok"})))
    engine = ScriptedEngine(
        {"coding": script, "summarizer": [say("Read the logs so far; all batches ok.")] * STEPS},
        markers={"coding": agent.marker, "summarizer": "context summarizer"},
    )
    events: list[tuple[str, Any]] = []
    archives: list[Any] = []

    def archive(payload: Any) -> str:
        archives.append(payload)
        return f"archive:{len(archives)}"

    cfg = LoopConfig(
        name=agent.name,
        system=system_prompt(agent, workspace=workspace, surface=surface, task="bench"),
        engine=engine,
        adapter=Adapter(ctx, executors),
        max_steps=STEPS + 5,
        stop_on_finish=True,
        no_action_retry_limit=0,
        step_retries=0,
        publish=lambda k, p: events.append((k, p)),
        context=context if with_economy else None,
        archive=archive,
    )
    result = await run_agent_loop(cfg, "Read every log and report.")
    if result.status is not Status.FINISHED or result.steps != STEPS + 1:
        raise BenchError(f"the session ended {result.status} after {result.steps}: {result.error}")
    sizes = [request_tokens(r) for _, r in engine.requests]
    limit = context.window - context.reserve_output
    kinds = [k for k, _ in events]
    if with_economy and max(sizes) > limit:
        raise BenchError(f"a request of {max(sizes)} tokens exceeded the window {limit}")
    return {
        "sent": sum(sizes),
        "peak": max(sizes),
        "requests": len(sizes),
        "compactions": kinds.count("compaction"),
        "spilled": sum(1 for k, p in events if k == "tool_result" and "spilled" in p),
        "offloaded": kinds.count("offload"),
        "limit": limit,
    }


async def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "ws").mkdir()
        without = await session(root / "ws", root / "state0", with_economy=False)
        with_ = await session(root / "ws", root / "state1", with_economy=True)
    figures = [
        {"name": "economy_tokens_sent", "value": with_["sent"], "unit": "tokens",
         "peer": "no economy", "peer_value": without["sent"],
         "ratio": round(with_["sent"] / without["sent"], 4), "steps": STEPS},
        {"name": "economy_peak_request", "value": with_["peak"], "unit": "tokens",
         "bound": with_["limit"], "within": "max", "pass": with_["peak"] <= with_["limit"],
         "ratio": round(with_["peak"] / with_["limit"], 4),
         "peer_value": without["peak"]},
        {"name": "economy_actions", "value": with_["compactions"], "unit": "compactions",
         "spilled_outputs": with_["spilled"], "offload_events": with_["offloaded"],
         "requests": with_["requests"], "peer_requests": without["requests"]},
    ]  # fmt: skip
    for figure in figures:
        print(json.dumps(figure))
    return 0 if with_["peak"] <= with_["limit"] else 1


if __name__ == "__main__":
    sys.exit(anyio.run(main))
