"""What a model request costs the Anthropic engine as the conversation grows (issue 17).

An agent asks once per step with the whole conversation. `AnthropicEngine` (the real engine and
the real `anthropic` SDK client, its HTTP transport answering in-process with a short SSE reply:
no socket, no server thread) is asked as a run asks it: a `History` growing by one tool call and
its 1.9 KB result per step, each request a view of it, the same system prompt and `TOOLS` tool
definitions every time. For each conversation length in `SIZES`, the history is grown to that
length through real requests (untimed), then `SAMPLES` more steps are timed — the CPU of the
asking thread (`time.thread_time`) for `complete(engine, request)`: building and sending the
body, reading the reply. Rounds alternate the sizes; figures are medians over `ROUNDS` rounds.

- `wire.anthropic.request_cpu.<n>msgs`: CPU µs per request at about n messages; reported.
- `wire.anthropic.growth`: that at the largest size over that at the smallest (flat is 1.0);
  bounded ≤ `GROWTH_BOUND`: what stays O(history) per request is joining the encoded texts and
  sending their bytes (≈ 2 MB at 1 000 messages), not building and encoding every message again.
Runs on any yagent whose `AnthropicEngine` takes a `client` (the same file measures the code
before a change).
"""

from __future__ import annotations

import json
import statistics
import sys
import time

import anthropic
import anyio
import httpx2

from benchlib import Report
from yagent.llm import Message, Request, ToolCall, complete
from yagent.llm.anthropic_engine import AnthropicEngine
from yagent.llm.history import History

SIZES = (10, 100, 1000)
SAMPLES = 20  # timed steps per size and round
ROUNDS = 5
TOOLS = 24
GROWTH_BOUND = 2.0
RESULT = "line of a source file read by the agent, as a tool returns it\n" * 30  # ≈ 1.9 KB


def _reply() -> bytes:
    usage = {"input_tokens": 10, "output_tokens": 2}
    message = {"id": "m", "type": "message", "role": "assistant", "model": "claude-bench"}
    message |= {"content": [], "stop_reason": None, "stop_sequence": None, "usage": usage}
    events = [
        {"type": "message_start", "message": message},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "ok"}},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": usage},
        {"type": "message_stop"},
    ]
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


REPLY = _reply()
SENT: list[int] = []  # body sizes, to check every request carried its conversation


def _answer(request: httpx2.Request) -> httpx2.Response:
    SENT.append(len(request.content))
    return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=REPLY)


def _engine() -> AnthropicEngine:
    http = httpx2.AsyncClient(transport=httpx2.MockTransport(_answer))
    client = anthropic.AsyncAnthropic(
        api_key="bench", base_url="http://bench", max_retries=0, http_client=http
    )
    return AnthropicEngine("claude-bench", client=client)


def _tools() -> tuple[dict[str, object], ...]:
    schema = {
        "type": "object",
        "properties": {"path": {"type": "string"}, "n": {"type": "integer"}},
    }
    return tuple(
        {"name": f"tool_{i:02d}", "description": f"Does thing {i} to a file.", "parameters": schema}
        for i in range(TOOLS)
    )


def _step(history: History, n: int) -> None:
    args = json.dumps({"path": f"src/module_{n}.py", "n": n})
    history.append(Message("assistant", "", (ToolCall(f"toolu_{n}", "tool_01", args),)))
    history.append(Message("tool", RESULT, tool_call_id=f"toolu_{n}", name="tool_01"))


async def _measure(size: int) -> float:
    """Median CPU µs of a request at about `size` messages, in a fresh engine and history."""
    engine, tools, system = _engine(), _tools(), "You are the coding agent. " * 80
    history = History([Message("user", "Fix the failing test in tests/test_app.py.")])
    step = 0
    while len(history) < size - 2 * SAMPLES:  # the run so far, asked step by step (untimed)
        await complete(engine, Request(system, history.view(), tools))
        _step(history, step)
        step += 1
    times = []
    for _ in range(SAMPLES):
        request = Request(system, history.view(), tools)
        start = time.thread_time()
        await complete(engine, request)
        times.append(time.thread_time() - start)
        _step(history, step)
        step += 1
    return statistics.median(times) * 1e6


def main() -> int:
    report = Report()
    per_size: dict[int, list[float]] = {size: [] for size in SIZES}
    for round_ in range(ROUNDS):
        order = SIZES if round_ % 2 == 0 else tuple(reversed(SIZES))
        for size in order:
            per_size[size].append(anyio.run(_measure, size))
    if not SENT or max(SENT) < (SIZES[-1] - 2) // 2 * len(RESULT):
        print(json.dumps({"name": "wire.anthropic", "error": "a request lacked its history"}))
        return 1
    medians = {size: statistics.median(values) for size, values in per_size.items()}
    for size, value in medians.items():
        report.figure(
            f"wire.anthropic.request_cpu.{size}msgs",
            round(value, 1),
            "us",
            messages=size,
            runs=per_size[size],
        )
    growth = medians[SIZES[-1]] / medians[SIZES[0]]
    report.figure("wire.anthropic.growth", round(growth, 3), "ratio", bound=GROWTH_BOUND)
    return report.exit_code()


if __name__ == "__main__":
    sys.exit(main())
