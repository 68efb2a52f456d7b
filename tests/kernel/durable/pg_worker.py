"""A worker process for tests/kernel/durable/test_pg_fencing.py: takes a lease on PostgreSQL,
says so, waits for a line on stdin (the test pauses it meanwhile), then tries to commit and
prints the outcome as one JSON line. Usage: pg_worker.py URL sideeffect|commitgate TTL."""

from __future__ import annotations

import json
import sys

import anyio

from yagent.kernel.durable import commitgate, sideeffect
from yagent.kernel.durable.commitgate.postgres import PgGate
from yagent.kernel.durable.sideeffect.postgres import PgStore


async def effect(url: str, ttl: float) -> dict[str, object]:
    with PgStore(url) as store:
        action = sideeffect.Action("push-1", "repo", sideeffect.RetrySafety.SAFE)
        grant = await store.acquire(action, "worker-a", ttl)
        assert grant.lease is not None
        print(json.dumps({"fence": grant.lease.fence}), flush=True)
        sys.stdin.readline()
        try:
            await store.complete(grant.lease, b"done by a")
        except sideeffect.LeaseError as exc:
            return {"committed": False, "error": type(exc).__name__}
        return {"committed": True}


async def gate(url: str, ttl: float) -> dict[str, object]:
    with PgGate(url, {"finished"}) as gate:
        got = await gate.acquire("run-1", "end", "worker-a", ttl)
        assert got.holding is not None
        print(json.dumps({"token": got.holding.token}), flush=True)
        sys.stdin.readline()
        try:
            await gate.commit(got.holding.token, "finished")
        except commitgate.TokenError as exc:
            return {"committed": False, "error": type(exc).__name__}
        return {"committed": True}


def main() -> None:
    url, kind, ttl = sys.argv[1], sys.argv[2], float(sys.argv[3])
    body = effect if kind == "sideeffect" else gate
    print(json.dumps(anyio.run(body, url, ttl)), flush=True)


if __name__ == "__main__":
    main()
