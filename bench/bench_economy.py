"""Tokens sent over a long scripted session, with and without the context economy (issue #6).

The session, the same for both: the Coding agent as `app.assemble` configures it (catalog
definition, system prompt, production Surface with deferred tools), `STEPS` steps that each read
a large tool output (`OUTPUT_CHARS` characters of log-like text, as a test run or a big file
read produces), two of them the same base64 image, then `agent_exit`. The model answers
instantly from a script (the summariser too). Tokens are the economy's own estimate
(`budget.approx_tokens`: 4 characters a token) of everything each request carries: system
prompt, tool definitions, messages — summariser requests included on the economy side.

- without: `LoopConfig.context = None` — the history is sent as it grows.
- truncate: the peer a user would otherwise have — the same requests as "without", each cut to
  the window by dropping its oldest turns (an assistant message with its tool results, never the
  task) until it fits. Truncation depends only on the history it cuts, so cutting the "without"
  requests is exactly what that peer sends; what it costs is memory: the figure counts the tool
  results the last request no longer holds in any form (the economy keeps them in a summary).
- with: the app's economy (`app.contextconfig.context_settings`) at a `WINDOW`-token window: outputs
  above `MAX_OUTPUT` characters spilled, the image offloaded after its first sighting,
  compaction at 80 % of the room.
Figures (JSON lines, `benchlib`): total tokens sent each way and their ratios, the largest single
request each way against the window (bound: the economy's ≤ the window less the output reserve),
how many tool results the truncating peer no longer holds at the end, and how many compactions,
spills and offloads the economy took. Every run is checked (all steps made, the exit reached, the
economy's requests within the window).
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

from benchlib import Report
from yagent.agents import catalog
from yagent.agents.context import system_prompt
from yagent.agents.loop import LoopConfig, run_agent_loop
from yagent.agents.results import Status
from yagent.app import contextconfig
from yagent.app.config import Config
from yagent.kernel.context.budget import approx_tokens
from yagent.llm import Message, Request
from yagent.llm.scripted import ScriptedEngine, call, say
from yagent.tools import registry
from yagent.tools.adapter import Adapter, ToolContext
from yagent.tools.guard import WorkspaceGuard
from yagent.tools.surface import Surface, SurfaceOptions
from yagent.toolspec.builtin import BUILTIN

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


def message_tokens(message: Message) -> int:
    return approx_tokens(message.content) + sum(
        approx_tokens(c.arguments) for c in message.tool_calls
    )


def truncated(request: Request, limit: int) -> tuple[int, int]:
    """`request`'s tokens once its oldest turns are dropped to fit `limit`, and how many tool
    results it dropped. The task (the first user message) is always kept."""
    fixed = request_tokens(Request(system=request.system, messages=(), tools=request.tools))
    messages = list(request.messages)
    head = [m for m in messages[:1] if m.role == "user"]
    rest = messages[len(head) :]
    size = fixed + sum(message_tokens(m) for m in messages)
    dropped = 0
    while size > limit and rest:
        turn = [rest.pop(0)]
        while rest and rest[0].role == "tool":
            turn.append(rest.pop(0))
        size -= sum(message_tokens(m) for m in turn)
        dropped += sum(1 for m in turn if m.role == "tool")
    return size, dropped


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
    context = contextconfig.context_settings(config, state_dir=state, session_id="bench")
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
    cut = [truncated(r, limit) for _, r in engine.requests]
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
        "truncated_sent": sum(size for size, _ in cut),
        "truncated_peak": max(size for size, _ in cut),
        "truncated_forgot": cut[-1][1],
    }


async def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "ws").mkdir()
        without = await session(root / "ws", root / "state0", with_economy=False)
        with_ = await session(root / "ws", root / "state1", with_economy=True)
    bench = Report()
    bench.figure(
        "economy_tokens_sent",
        with_["sent"],
        "tokens",
        peer="no economy",
        peer_value=without["sent"],
        ratio=round(with_["sent"] / without["sent"], 4),
        truncate_peer_value=without["truncated_sent"],
        ratio_to_truncate=round(with_["sent"] / without["truncated_sent"], 4),
        steps=STEPS,
    )
    bench.figure(
        "economy_peak_request",
        with_["peak"],
        "tokens",
        bound=with_["limit"],
        within="max",
        ratio=round(with_["peak"] / with_["limit"], 4),
        peer_value=without["peak"],
        truncate_peer_value=without["truncated_peak"],
    )
    bench.figure(
        "economy_truncate_peer_forgets",
        without["truncated_forgot"],
        "tool results absent from the last request",
        of=STEPS,
        note="the truncating peer drops the oldest turns outright; the economy keeps them in "
        "a summary (0 forgotten outright)",
    )
    bench.figure(
        "economy_actions",
        with_["compactions"],
        "compactions",
        spilled_outputs=with_["spilled"],
        offload_events=with_["offloaded"],
        requests=with_["requests"],
        peer_requests=without["requests"],
    )
    return bench.exit_code()


if __name__ == "__main__":
    sys.exit(anyio.run(main))
