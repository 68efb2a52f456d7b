"""PostgreSQL store operations per second against SQLite, in one run (ratios of interleaved pairs).

Operations, each through the async API a host uses, on a fresh key / run / task each time:
- `sideeffect`: one `acquire` + `complete` (the bookkeeping of one side effect that ran);
- `checkpoint`: one `save_if_newer` of a 20-step snapshot (seq one above the last);
- `taskboard`: one `post` + `claim` + `complete`.
SQLite is the embedded default (one file, WAL, synchronous=FULL: every commit fsynced).
PostgreSQL is Debian's server started here in a temp dir (`tests.pg.Cluster`, fsync ON, commits
durable), reached over a unix socket — every operation pays round trips that SQLite does not.
With 4 processes the side-effect figure is the aggregate of 4 processes sharing one store.

Bound (declared, judged by benchlib): single-process PostgreSQL throughput >= 0.2x SQLite's for
each operation — a remote store is slower per operation, but not by more than five times; the
4-process figures are reported with their ratio, without a bound (both serialise writers: SQLite
on its file lock, PostgreSQL on the store's advisory lock — docs/adr/0021-*). Exit 1 on a miss.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.pg import Cluster  # noqa: E402

from benchlib import Report, interleaved  # noqa: E402
from yagent.kernel.durable import checkpoint, sideeffect, taskboard  # noqa: E402
from yagent.kernel.durable.checkpoint.postgres import PgStore as PgCheckpoints  # noqa: E402
from yagent.kernel.durable.sideeffect.postgres import PgStore as PgEffects  # noqa: E402
from yagent.kernel.durable.taskboard.postgres import PgBoard  # noqa: E402

PAIRS = 5
OPS = 300
PROCS = 4
BOUND = 0.2
STEPS = tuple(
    checkpoint.StepRecord(str(i), checkpoint.StepStatus.COMPLETED, f"d{i}", "{}")
    for i in range(1, 21)
)


def _open(kind: str, backend: str, where: str) -> Any:
    if kind == "sideeffect":
        return sideeffect.SqliteStore(where) if backend == "sqlite" else PgEffects(where)
    if kind == "checkpoint":
        return checkpoint.SqliteStore(where) if backend == "sqlite" else PgCheckpoints(where)
    return taskboard.SqliteBoard(where) if backend == "sqlite" else PgBoard(where)


def _op(kind: str, store: Any, prefix: str) -> Callable[[int], Awaitable[None]]:
    async def effect(i: int) -> None:
        grant = await store.acquire(sideeffect.Action(f"{prefix}{i}", f"{prefix}r{i}"), "b", 30.0)
        await store.complete(grant.lease, b"ok")

    async def save(i: int) -> None:
        state = checkpoint.RunState.ACTIVE
        await store.save_if_newer(checkpoint.RunProgress(f"{prefix}run", i + 1, state, STEPS))

    async def board(i: int) -> None:
        await store.post(f"{prefix}{i}")
        task = await store.claim(f"{prefix}{i}", "b", taskboard.ClaimRequest(30.0))
        await store.complete(task.lease.token, "done")

    return {"sideeffect": effect, "checkpoint": save, "taskboard": board}[kind]


def _rate(kind: str, backend: str, where: str, prefix: str, count: int) -> tuple[float, float]:
    store = _open(kind, backend, where)
    op = _op(kind, store, prefix)

    async def body() -> tuple[float, float]:
        start = time.time()
        for i in range(count):
            await op(i)
        return start, time.time()

    try:
        return anyio.run(body)
    finally:
        store.close()


def _child(kind: str, backend: str, where: str, prefix: str, barrier: Any, out: Any) -> None:
    barrier.wait()
    out.put(_rate(kind, backend, where, prefix, OPS // 2))


def _multi(kind: str, backend: str, where: str, run: str) -> float:
    ctx = mp.get_context("spawn")
    barrier, out = ctx.Barrier(PROCS), ctx.Queue()
    procs = [
        ctx.Process(target=_child, args=(kind, backend, where, f"{run}.{n}.", barrier, out))
        for n in range(PROCS)
    ]
    for proc in procs:
        proc.start()
    spans = [out.get(timeout=600) for _ in procs]
    for proc in procs:
        proc.join()
        if proc.exitcode != 0:
            raise RuntimeError(f"bench worker exited with {proc.exitcode}")
    return PROCS * (OPS // 2) / (max(e for _, e in spans) - min(s for s, _ in spans))


def main() -> int:
    bench = Report()
    cluster = Cluster(durable=True)
    try:
        cluster.start()
        with tempfile.TemporaryDirectory(prefix="bench-pg-", dir=os.environ.get("BENCH_DIR")) as d:
            for kind in ("sideeffect", "checkpoint", "taskboard"):
                where = {"sqlite": str(Path(d) / f"{kind}.db"), "postgres": cluster.database()}

                def one(backend: str, kind: str = kind, where: dict[str, str] = where) -> float:
                    start, end = _rate(kind, backend, where[backend], f"s{time.time()}.", OPS)
                    return OPS / (end - start)

                # interleaved reports b / a: here PostgreSQL / SQLite
                pairs = interleaved(lambda: 1 / one("sqlite"), lambda: 1 / one("postgres"), PAIRS)
                sqlite_rate, pg_rate = 1 / pairs.a, 1 / pairs.b
                name = f"pgstore.{kind}"
                bench.figure(f"{name}.sqlite.1proc", round(sqlite_rate, 1), "ops/s", pairs=PAIRS)
                bench.figure(f"{name}.postgres.1proc", round(pg_rate, 1), "ops/s", pairs=PAIRS)
                bench.figure(
                    f"{name}.postgres_over_sqlite.1proc",
                    round(1 / pairs.ratio, 2),
                    "x",
                    bound=BOUND,
                    within="min",
                    note="median of interleaved per-pair throughput ratios",
                )
            where = {"sqlite": str(Path(d) / "multi.db"), "postgres": cluster.database()}
            multi = interleaved(
                lambda: 1 / _multi("sideeffect", "sqlite", where["sqlite"], f"m{time.time()}"),
                lambda: 1 / _multi("sideeffect", "postgres", where["postgres"], f"m{time.time()}"),
                3,
            )
            bench.figure("pgstore.sideeffect.sqlite.4proc", round(1 / multi.a, 1), "ops/s")
            bench.figure("pgstore.sideeffect.postgres.4proc", round(1 / multi.b, 1), "ops/s")
            bench.figure(
                "pgstore.sideeffect.postgres_over_sqlite.4proc",
                round(1 / multi.ratio, 2),
                "x",
                processes=PROCS,
                cores=os.cpu_count(),
            )
    finally:
        cluster.stop()
    return bench.exit_code()


if __name__ == "__main__":
    sys.exit(main())
