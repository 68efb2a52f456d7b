"""Benchmark: netguard checks per second (the cost it adds to each outbound fetch).

Figures (one JSON line each, median of several runs):
- netguard_check_name: full `check` of a name URL with an in-memory resolver (scheme, syntax,
  name layer, resolution call, every address judged);
- netguard_check_literal: full `check` of an address-literal URL (no resolution);
- netguard_screen: the synchronous request screen the transport runs on every request;
- netguard_block: `check` of a refused payload (numeric spelling), i.e. the cost of a refusal.
Each line carries `ratio_to_screen` where useful: how much the resolution path costs over the
bare screen, measured in the same run.
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Awaitable, Callable, Sequence

import anyio

from yagent.kernel.confine.netguard import BlockedError, Guard

RUNS = 7
N = 5000


class Table:
    async def resolve(self, host: str, port: int) -> Sequence[str]:
        return ["93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"]


async def _timed(op: Callable[[], Awaitable[object]], n: int) -> float:
    start = time.perf_counter()
    for _ in range(n):
        await op()
    return n / (time.perf_counter() - start)


async def _median(op: Callable[[], Awaitable[object]]) -> float:
    await _timed(op, 200)  # warm-up
    return statistics.median([await _timed(op, N) for _ in range(RUNS)])


async def main() -> None:
    guard = Guard(Table())

    async def name() -> object:
        return await guard.check("https://www.example.com/path?q=1")

    async def literal() -> object:
        return await guard.check("http://93.184.216.34:8080/x")

    async def screen() -> object:
        return guard.screen("https://www.example.com/path?q=1")

    async def block() -> object:
        try:
            await guard.check("http://0x7f.1/")
        except BlockedError as exc:
            return exc
        raise AssertionError("payload passed")

    base = await _median(screen)
    figures = {
        "netguard_check_name": await _median(name),
        "netguard_check_literal": await _median(literal),
        "netguard_screen": base,
        "netguard_block": await _median(block),
    }
    for fig, value in figures.items():
        line = {"name": fig, "value": round(value), "unit": "checks/s", "runs": RUNS, "n": N}
        if fig != "netguard_screen":
            line["ratio_to_screen"] = round(value / base, 3)
        print(json.dumps(line))


if __name__ == "__main__":
    anyio.run(main)
