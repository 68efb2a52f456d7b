"""A torture-test worker: applies every action through `execute_with` against one SQLite store.

Run as `python torture_worker.py CONFIG_JSON`. The downstream is a fenced, append-only SQLite table
in its own file (a stand-in for a remote system): every application is one row, written in the same
transaction that compares the fence. The worker kills itself with SIGKILL at random points — after
acquiring, before the effect, and between the effect and the bookkeeping — and, for the keys listed
in `die_after_effect`, deterministically the first time anyone applies them (an O_EXCL marker file
says who was first). It exits 0 once every key is settled from its point of view (done or needing
reconciliation; anything else is retried), 3 when it runs past its deadline.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import sys
import time
from pathlib import Path
from typing import Any

import anyio

from yagent.kernel.durable.sideeffect import (
    Action,
    Lease,
    Outcome,
    RetrySafety,
    SqliteStore,
    StaleFenceError,
    execute_with,
    fence_accepts,
)

DONE = {Outcome.APPLIED, Outcome.ALREADY_DONE}


def actions(count: int, resources: int, safe_from: int) -> list[Action]:
    return [
        Action(
            f"k{i:02d}",
            f"r{i % resources}",
            RetrySafety.SAFE if i >= safe_from else RetrySafety.UNDECLARED,
        )
        for i in range(count)
    ]


class SqliteSink:
    """A FencedSink over an append-only table; retry-safe keys are deduplicated by key."""

    SCHEMA = (
        "CREATE TABLE IF NOT EXISTS applied (seq INTEGER PRIMARY KEY AUTOINCREMENT, key TEXT,"
        " resource TEXT, fence INTEGER, worker TEXT, duplicate INTEGER)",
        "CREATE TABLE IF NOT EXISTS high (resource TEXT PRIMARY KEY, fence INTEGER)",
    )

    def __init__(self, path: str) -> None:
        self.conn = sqlite3.connect(path, timeout=30, isolation_level=None)
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute("PRAGMA synchronous=FULL")
        self.conn.execute("BEGIN IMMEDIATE")
        for statement in self.SCHEMA:
            self.conn.execute(statement)
        self.conn.execute("COMMIT")

    def write(self, lease: Lease, worker: str, dedup: bool) -> None:
        conn = self.conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            row = conn.execute("SELECT fence FROM high WHERE resource = ?", (lease.resource,))
            found = row.fetchone()
            high = None if found is None else int(found[0])
            if high is not None and not fence_accepts(high, lease.fence):
                raise StaleFenceError(lease.resource, lease.fence, high)
            seen = conn.execute(
                "SELECT 1 FROM applied WHERE key = ? AND duplicate = 0", (lease.key,)
            ).fetchone()
            conn.execute(
                "INSERT INTO applied (key, resource, fence, worker, duplicate) VALUES (?,?,?,?,?)",
                (lease.key, lease.resource, lease.fence, worker, int(dedup and seen is not None)),
            )
            conn.execute(
                "INSERT OR REPLACE INTO high (resource, fence) VALUES (?, ?)",
                (lease.resource, lease.fence),
            )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise


def die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


async def work(cfg: dict[str, Any]) -> int:
    rng = random.Random(cfg["seed"])
    worker: str = cfg["worker"]
    chance: float = cfg["kill_chance"]
    markers = Path(cfg["markers"])
    doomed = set(cfg["die_after_effect"])
    acts = actions(cfg["count"], cfg["resources"], cfg["safe_from"])
    store = SqliteStore(cfg["store"])
    sink = SqliteSink(cfg["sink"])
    ttl: float = cfg["ttl"]
    deadline = time.monotonic() + cfg["budget"]

    def maybe_die(act: Action) -> None:
        # Doomed keys are spared the random kills so that they reach their deterministic one.
        if act.key not in doomed and rng.random() < chance:
            die()

    pending = list(acts)
    while pending:
        if time.monotonic() > deadline:
            return 3
        act = rng.choice(pending)

        async def prepare(lease: Lease, act: Action = act) -> None:
            maybe_die(act)  # holding a lease and an intent, before the effect

        async def apply(lease: Lease, act: Action = act) -> bytes:
            maybe_die(act)  # before the effect
            sink.write(lease, worker, dedup=act.retry_safety is RetrySafety.SAFE)
            if act.key in doomed:
                try:
                    os.close(os.open(markers / act.key, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
                except FileExistsError:
                    pass
                else:
                    die()  # the first application of a doomed key: effect done, no bookkeeping
            maybe_die(act)  # between the effect and the bookkeeping
            return f"{act.key}@{worker}".encode()

        done = await execute_with(store, act, prepare, apply, holder=worker, ttl=ttl)
        if done.outcome in DONE or done.needs_reconciliation:
            pending.remove(act)
        else:
            await anyio.sleep(rng.uniform(0.005, 0.03))
    store.close()
    return 0


def main() -> int:
    cfg = json.loads(sys.argv[1])
    return anyio.run(work, cfg)


if __name__ == "__main__":
    sys.exit(main())
