"""Cost of judging one call through a 5-stage `invoke.Chain`, relative to a bare async call.

Prints JSON lines: per-call nanoseconds for both and their ratio (median of several runs, both
measured in this one process so machine noise affects them alike).
"""

from __future__ import annotations

import asyncio
import json
import statistics
import time

from yagent.kernel.judge.invoke import Call, Chain, FuncStage, Verdict

CALLS = 20_000
RUNS = 7


async def allow(call: Call) -> Verdict:
    return Verdict.allow()


async def bare(call: Call) -> str:
    return call.tool


async def measure(fn: object, call: Call) -> float:
    start = time.perf_counter_ns()
    for _ in range(CALLS):
        await fn(call)  # type: ignore[operator]
    return (time.perf_counter_ns() - start) / CALLS


async def main() -> None:
    chain = Chain([FuncStage(f"s{i}", allow) for i in range(5)])
    call = Call("tool", {"a": 1}, call_id="c")

    async def through_chain(c: Call) -> object:
        return await chain.invoke(c, bare)

    bare_ns, chain_ns = [], []
    for _ in range(RUNS):
        bare_ns.append(await measure(bare, call))
        chain_ns.append(await measure(through_chain, call))
    b, c = statistics.median(bare_ns), statistics.median(chain_ns)
    print(json.dumps({"name": "invoke.bare_async_call", "value": round(b, 1), "unit": "ns/call"}))
    print(
        json.dumps(
            {
                "name": "invoke.chain5_judge_and_execute",
                "value": round(c, 1),
                "unit": "ns/call",
                "ratio_to_bare": round(c / b, 2),
                "runs": RUNS,
                "calls_per_run": CALLS,
            }
        )
    )


if __name__ == "__main__":
    asyncio.run(main())
