"""Throughput of sideeffect acquire → complete: memory and SQLite stores, 1 and 4 processes.

One "op" is one `acquire` of a fresh key followed by its `complete` (the bookkeeping of one side
effect that ran), through the async API a host uses. Resources are spread so that nothing contends:
the figure is the store's own cost. SQLite runs in WAL mode with synchronous=FULL (the default:
every commit is fsynced) and, for comparison, NORMAL. With 4 processes all share one SQLite file
(writers serialise on its lock); the memory store is per process (it offers nothing across
processes), so its 4-process figure is 4 independent stores. The 1-process and 4-process runs
are interleaved in pairs (1, 4, 4, 1, ...; 7 pairs for SQLite) and the 4-process figure carries
the median of the per-pair ratios (`ratio_to_1proc`, with the lowest and highest pair beside it),
so a drift in the shared machine's disk hits both sides.
Bound: the SQLite store must not slow down with 4 processes sharing its file — aggregate
throughput with 4 processes >= the 1-process throughput (`ratio_to_1proc` >= 1.0), for FULL and
NORMAL; the benchmark exits 1 when either is missed. Prints one JSON line per figure.
"""

from __future__ import annotations

import itertools
import multiprocessing as mp
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import anyio

from benchlib import Report, interleaved
from yagent.kernel.durable.sideeffect import (
    Action,
    Lease,
    MemoryStore,
    RowStore,
    SqliteStore,
    execute_with,
)

RUNS = 3  # the memory store's pairs and the runner's repeats
SQLITE_PAIRS = 7  # interleaved pairs for the SQLite figures: their medians, and the spread
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


async def _through_runner(count: int) -> float:
    store = MemoryStore()

    async def apply(lease: Lease) -> bytes:
        return b"ok"

    start = time.perf_counter()
    for i in range(count):
        await execute_with(store, Action(f"x{i}", f"r{i % 64}"), None, apply, holder="b", ttl=30)
    return count / (time.perf_counter() - start)


def main() -> int:
    bench = Report()
    with tempfile.TemporaryDirectory(
        prefix="bench-sideeffect-", dir=os.environ.get("BENCH_DIR")
    ) as tmp:
        for kind, count in OPS.items():
            path = str(Path(tmp) / f"{kind}.db")
            runs = itertools.count()

            def single(
                kind: str = kind, path: str = path, count: int = count, runs: Iterator[int] = runs
            ) -> float:
                start, end = _timed(kind, path, f"s{next(runs)}.", count)
                return count / (end - start)

            def multi(
                kind: str = kind, path: str = path, count: int = count, runs: Iterator[int] = runs
            ) -> float:
                return _multi(kind, path, next(runs), count // 2)

            count_pairs = RUNS if kind == "memory" else SQLITE_PAIRS
            pairs = interleaved(single, multi, count_pairs)
            common: dict[str, object] = {"runs": count_pairs}
            if kind != "memory":
                common["sync"] = "FULL" if kind == "sqlite" else "NORMAL"
            name = f"sideeffect.acquire_complete.{kind}"
            bench.figure(f"{name}.1proc", round(pairs.a, 1), "ops/s", ops_per_run=count, **common)
            bench.figure(
                f"{name}.{PROCS}proc",
                round(pairs.b, 1),
                "ops/s",
                ratio_to_1proc=round(pairs.ratio, 2),
                ops_per_process=count // 2,
                cores=os.cpu_count(),
                **common,
            )
            if kind != "memory":
                bench.figure(
                    f"{name}.{PROCS}proc_over_1proc",
                    round(pairs.ratio, 2),
                    "x",
                    bound=1.0,
                    within="min",
                    note="median of interleaved per-pair ratios of aggregate throughput",
                    lowest_pair=round(min(pairs.ratios), 2),
                    highest_pair=round(max(pairs.ratios), 2),
                    **common,
                )
        runner = statistics.median(anyio.run(_through_runner, 10_000) for _ in range(RUNS))
        bench.figure(
            "sideeffect.execute_with.memory.1proc",
            round(runner, 1),
            "ops/s",
            note="acquire, renew, apply, complete",
        )
    return bench.exit_code()


if __name__ == "__main__":
    sys.exit(main())
