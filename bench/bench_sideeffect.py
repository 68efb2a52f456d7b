"""Throughput of sideeffect acquire → complete: memory and SQLite stores, 1 and 4 processes.

One "op" is one `acquire` of a fresh key followed by its `complete` (the bookkeeping of one side
effect that ran), through the async API a host uses. Resources are spread so that nothing contends:
the figure is the store's own cost. SQLite runs in WAL mode with synchronous=FULL (the default:
every commit is fsynced) and, for comparison, NORMAL. With 4 processes all share one SQLite file
(writers serialise on its lock); the memory store is per process (it offers nothing across
processes), so its 4-process figure is 4 independent stores. Medians of several runs; 4-process
figures carry their ratio to the 1-process figure measured in the same run of this script.
Prints one JSON line per figure.
"""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import anyio

from yagent.kernel.sideeffect import (
    Action,
    Lease,
    MemoryStore,
    RowStore,
    SqliteStore,
    execute_with,
)

RUNS = 3
OPS = {"memory": 20_000, "sqlite": 1_500, "sqlite_normal": 3_000}
PROCS = 4


def _store(kind: str, path: str) -> RowStore:
    if kind == "memory":
        return MemoryStore()
    return SqliteStore(path, synchronous="NORMAL" if kind == "sqlite_normal" else "FULL")


async def _ops(store: RowStore, prefix: str, count: int) -> None:
    for i in range(count):
        grant = await store.acquire(Action(f"{prefix}{i}", f"{prefix}r{i % 64}"), "bench", 30.0)
        if grant.lease is None:
            raise RuntimeError(f"bench: unexpected {grant.outcome}")
        await store.complete(grant.lease, b"ok")


def _timed(kind: str, path: str, prefix: str, count: int) -> tuple[float, float]:
    store = _store(kind, path)
    start = time.perf_counter()
    anyio.run(_ops, store, prefix, count)
    end = time.perf_counter()
    getattr(store, "close", lambda: None)()
    return start, end


def _child(kind: str, path: str, prefix: str, count: int, barrier: object, out: object) -> None:
    store = _store(kind, path)
    barrier.wait()  # type: ignore[attr-defined]
    start = time.time()
    anyio.run(_ops, store, prefix, count)
    out.put((start, time.time()))  # type: ignore[attr-defined]
    getattr(store, "close", lambda: None)()


def _multi(kind: str, path: str, run: int, count: int) -> float:
    ctx = mp.get_context("spawn")
    barrier, out = ctx.Barrier(PROCS), ctx.Queue()
    procs = [
        ctx.Process(target=_child, args=(kind, path, f"p{run}.{n}.", count, barrier, out))
        for n in range(PROCS)
    ]
    for proc in procs:
        proc.start()
    spans = [out.get(timeout=600) for _ in procs]
    for proc in procs:
        proc.join()
        if proc.exitcode != 0:
            raise RuntimeError(f"bench worker exited with {proc.exitcode}")
    wall = max(end for _, end in spans) - min(start for start, _ in spans)
    return PROCS * count / wall


def _median(fn: Callable[[int], float]) -> float:
    return statistics.median(fn(run) for run in range(RUNS))


def _emit(name: str, value: float, **extra: object) -> None:
    print(json.dumps({"name": name, "value": round(value, 1), "unit": "ops/s", **extra}))
    sys.stdout.flush()


async def _through_runner(count: int) -> float:
    store = MemoryStore()

    async def apply(lease: Lease) -> bytes:
        return b"ok"

    start = time.perf_counter()
    for i in range(count):
        await execute_with(store, Action(f"x{i}", f"r{i % 64}"), None, apply, holder="b", ttl=30)
    return count / (time.perf_counter() - start)


def main() -> None:
    with tempfile.TemporaryDirectory(
        prefix="bench-sideeffect-", dir=os.environ.get("BENCH_DIR")
    ) as tmp:
        for kind, count in OPS.items():
            path = str(Path(tmp) / f"{kind}.db")

            def single(run: int, kind: str = kind, path: str = path, count: int = count) -> float:
                start, end = _timed(kind, path, f"s{run}.", count)
                return count / (end - start)

            def multi(run: int, kind: str = kind, path: str = path, count: int = count) -> float:
                return _multi(kind, path, run, count // 2)

            one = _median(single)
            four = _median(multi)
            common: dict[str, object] = {"runs": RUNS}
            if kind != "memory":
                common["sync"] = "FULL" if kind == "sqlite" else "NORMAL"
            _emit(f"sideeffect.acquire_complete.{kind}.1proc", one, ops_per_run=count, **common)
            _emit(
                f"sideeffect.acquire_complete.{kind}.{PROCS}proc",
                four,
                ratio_to_1proc=round(four / one, 2),
                ops_per_process=count // 2,
                cores=os.cpu_count(),
                **common,
            )
        runner = statistics.median(anyio.run(_through_runner, 10_000) for _ in range(RUNS))
        _emit(
            "sideeffect.execute_with.memory.1proc", runner, note="acquire, renew, apply, complete"
        )


if __name__ == "__main__":
    main()
