"""What a step's records cost the session store (issue 17): its two commits, CPU per step.

A tool step's records — four events, the assistant message and the usage before the tool runs
(the write-ahead), the tool message, two events and the call's result after it (the step's end)
— written through the app's `StepLog` into a real `sessions.db` (SQLite, WAL, synchronous
NORMAL, as the app opens it). The payloads are the shapes `App.run` writes for a `think` step of
`bench_loop.py`'s conversation.

- `store.app_step_cpu`: the two commits inside the full app (`App.run`, 100 think steps of
  `bench_loop.py`'s `yagent_app` column: pii, telemetry, checkpoints and the terminal's queue
  around them), CPU µs of the writing thread in `StepLog.flush` per step, median of `APP_RUNS`
  runs; bounded ≤ `STEP_BOUND` µs (issue 17's target for the session store's share of a step).
- `store.step_cpu`: the same commits alone (no app around them: what the store itself costs
  without the cache pressure of the rest of a step), median of `ROUNDS` rounds of `STEPS` steps
  after 100 steps of warm-up; reported.
- `store.step_cpu_cold`: the same commits alone, with `COLD_OBJECTS` other Python objects read
  between two steps (untimed) — what the rest of an app step does to the CPU's caches; reported.
  It is why the commits cost more in the app than alone: they run the same statements on the
  same rows there (counted: statements, page-cache hits and misses, WAL frames a step — see
  docs/performance.md, "Issue 17's second store pass"), and find what they touch cold.
- `store.statements_per_step`: SQL statements the store ran per step (traced): one per record,
  four per commit (BEGIN, the seq check, the session's time, COMMIT); bounded ≤
  `STATEMENTS_BOUND` (24 before issue 17's store pass: a `MAX(seq)` per table and transaction).
Runs on any yagent whose `StepLog` has `flush` (the same file measures the code before a change).
"""

from __future__ import annotations

import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio

import bench_loop
from benchlib import Report
from yagent.app import opensession
from yagent.app.steplog import StepLog
from yagent.memory import SessionStore

STEPS = 1000
ROUNDS = 5
COLD_STEPS = 300
COLD_OBJECTS = 4000  # objects read between two steps of `store.step_cpu_cold`
APP_STEPS = 100
APP_RUNS = 7
STEP_BOUND = 250.0  # µs of CPU for a tool step's two commits, in the app (issue 17)
STATEMENTS_BOUND = 19
REPORT = Report()


def step(log: StepLog, n: int, now: float) -> None:
    """One `think` step's records, as `App.run` hands them to its step log."""
    call_id, calls = f"c{n}", [{"id": f"c{n}", "name": "think", "arguments": '{"thought": "s"}'}]
    base = {"agent": "coding", "delegation_id": "", "step": n}
    segments = {"system": 582, "tool_definitions": 2753, "history": 14, "tool_results": 6}
    log.event(
        "context",
        {
            **base,
            "segments": segments,
            "total": 3355,
            "window": 119808,
            "fraction": 0.028,
            "messages": 5,
            "grew": {"segment": "history", "delta": 6},
            "window_note": "8192 tokens reserved for the reply",
        },
        "",
    )
    log.event("model_request", {**base, "tool_defs_hash": "6da0bb4fdc7237ac"}, "")
    log.usage(
        model="scripted",
        input_tokens=10,
        output_tokens=5,
        cache_read_tokens=0,
        cache_write_tokens=0,
        cost=None,
    )
    usage = {
        "input_tokens": 10,
        "output_tokens": 5,
        "cache_read_tokens": 0,
        "cache_write_tokens": 0,
    }
    turn = {**base, "text": "", "tool_calls": calls, "usage": usage, "model": "scripted"}
    log.event("assistant_turn", turn, "")
    log.message({"role": "assistant", "content": "", "tool_calls": calls}, "coding", "")
    call = {**base, "call_id": call_id, "name": "think", "arguments": '{"thought": "s"}'}
    log.event("tool_call", call, "")  # the write-ahead commit
    result = '{"ok": true}'
    tool = {"role": "tool", "content": result, "tool_call_id": call_id, "name": "think"}
    log.message(tool, "coding", "")
    done = {**base, "call_id": call_id, "name": "think", "ok": True, "kind": None}
    log.event("tool_result", {**done, "content": result}, "")
    activity = {
        **base,
        "calls": [{"call_id": call_id, "name": "think", "ok": True}],
        "started_at": now,
        "ended_at": now,
        "parallel_peak": 1,
    }
    log.event("sub_agent_activity", activity, "")  # the step's end


class Timed(StepLog):
    """A step log that adds up the CPU its commits take (`flush`, the thread's time)."""

    spent = 0.0

    def flush(self) -> None:
        start = time.thread_time()
        try:
            super().flush()
        finally:
            Timed.spent += time.thread_time() - start


def cold(tmp: Path) -> None:
    """`store.step_cpu_cold` (see the module doc)."""
    others = [{"n": n, "text": str(n)} for n in range(60_000)]
    shuffle = random.Random(17)
    with SessionStore(tmp / "sessions.db") as store:
        sid = store.create_session(workspace=str(tmp)).id
        log = Timed(store, sid)
        for n in range(100):
            step(log, n, time.time())
        per_step = []
        for r in range(ROUNDS):
            Timed.spent = 0.0
            for n in range(COLD_STEPS):
                sum(other["n"] for other in shuffle.sample(others, COLD_OBJECTS))
                step(log, 100 + r * COLD_STEPS + n, 1.0)
            per_step.append(Timed.spent / COLD_STEPS * 1e6)
    REPORT.figure(
        "store.step_cpu_cold",
        round(statistics.median(per_step), 1),
        "us/step (CPU, a tool step's two commits, alone, caches disturbed between steps)",
        rounds=[round(x, 1) for x in per_step],
        steps=COLD_STEPS,
        objects_between=COLD_OBJECTS,
    )


def isolated(tmp: Path) -> None:
    with SessionStore(tmp / "sessions.db") as store:
        sid = store.create_session(workspace=str(tmp)).id
        log = Timed(store, sid)
        for n in range(100):
            step(log, n, time.time())
        per_step = []
        statements: list[str] = []
        for r in range(ROUNDS):
            Timed.spent = 0.0
            for n in range(STEPS):
                step(log, 100 + r * STEPS + n, 1.0)
            per_step.append(Timed.spent / STEPS * 1e6)
        store._live().set_trace_callback(statements.append)
        for n in range(10):
            step(log, 10**7 + n, 1.0)
        store._live().set_trace_callback(None)
        stored = store.tool_calls(sid)
    if len(stored) != 100 + ROUNDS * STEPS + 10 or stored[-1].content != '{"ok": true}':
        raise SystemExit("bench_steplog: the steps were not all stored")
    REPORT.figure(
        "store.step_cpu",
        round(statistics.median(per_step), 1),
        "us/step (CPU, a tool step's two commits, alone)",
        rounds=[round(x, 1) for x in per_step],
        steps=STEPS,
    )
    REPORT.figure(
        "store.statements_per_step",
        len(statements) / 10,
        "statements/step",
        bound=STATEMENTS_BOUND,
    )


async def in_app(tmp: Path) -> None:
    bench_loop.STEPS, bench_loop.TOTAL = APP_STEPS, APP_STEPS + 1
    workspace = tmp / "ws"
    workspace.mkdir()
    opensession.StepLog = Timed  # type: ignore[misc]  # the app's sessions open this step log
    per_step = []
    async with bench_loop._open_app(tmp / "home", workspace) as app:
        run = bench_loop.yagent_app(app)
        await bench_loop.timed(run)  # warm-up
        for _ in range(APP_RUNS):
            Timed.spent = 0.0
            await bench_loop.timed(run)
            per_step.append(Timed.spent / (APP_STEPS + 1) * 1e6)
    REPORT.figure(
        "store.app_step_cpu",
        round(statistics.median(per_step), 1),
        "us/step (CPU of StepLog.flush inside App.run)",
        bound=STEP_BOUND,
        runs=[round(x, 1) for x in per_step],
        steps=APP_STEPS + 1,
    )


async def main() -> int:
    with tempfile.TemporaryDirectory(prefix="yagent-bench-steplog-") as tmp:
        isolated(Path(tmp))
    with tempfile.TemporaryDirectory(prefix="yagent-bench-steplog-cold-") as tmp:
        cold(Path(tmp))
    with tempfile.TemporaryDirectory(prefix="yagent-bench-steplog-app-") as tmp:
        await in_app(Path(tmp))
    return REPORT.exit_code()


if __name__ == "__main__":
    sys.exit(anyio.run(main))
