"""Events per second through the trajectory projector on a generated 100 000-event session.

The session is yagent-shaped (model request, assistant turn declaring three calls, three calls,
three results, the step's activity record; a turn end every 50 steps), translated by the app's
real vocabulary. Prints JSON lines: the projector alone, the projector plus the watchdog (the
live telemetry path, without export), and the cost of snapshotting every turn's rows and summary
afterwards. Medians of several runs, all measured in this process.
"""

from __future__ import annotations

import json
import statistics
import time
from typing import Any

from yagent.app.telemetry import VOCABULARY, enrich
from yagent.kernel.trace.trajectory import Trajectory
from yagent.kernel.trace.watchdog import Watchdog
from yagent.llm.pricing import DEFAULT_PRICES

EVENTS = 100_000
RUNS = 5
STEPS_PER_TURN = 50


def session(size: int) -> list[tuple[str, dict[str, Any], float]]:
    out: list[tuple[str, dict[str, Any], float]] = []
    clock, step, n = 1_700_000_000.0, 0, 0
    base = {"agent": "coding", "delegation_id": ""}
    while len(out) < size:
        step += 1
        ids = [f"c{n + i}" for i in range(3)]
        n += 3
        calls = [{"id": i, "name": "read_file", "arguments": '{"path": "a.py"}'} for i in ids]
        usage = {
            "input_tokens": 1200,
            "output_tokens": 80,
            "cache_read_tokens": 0,
            "cache_write_tokens": 0,
        }
        out.append(("model_request", {**base, "step": step, "tool_defs_hash": "h"}, clock))
        out.append(
            (
                "assistant_turn",
                {
                    **base,
                    "step": step,
                    "text": "",
                    "tool_calls": calls,
                    "usage": usage,
                    "model": "gpt-4o",
                },
                clock + 0.8,
            )
        )
        call = {**base, "step": step, "name": "read_file", "arguments": "{}"}
        done = {**base, "step": step, "name": "read_file", "ok": True, "kind": None}
        out.extend(("tool_call", {**call, "call_id": i}, clock + 0.9) for i in ids)
        out.extend(
            ("tool_result", {**done, "call_id": i, "content": "x" * 200}, clock + 1.1) for i in ids
        )
        out.append(("sub_agent_activity", {**base, "step": step, "calls": []}, clock + 1.1))
        if step % STEPS_PER_TURN == 0:
            out.append(
                (
                    "run_end",
                    {**base, "status": "finished", "steps": step, "error": "", "note": ""},
                    clock + 1.2,
                )
            )
            step = 0
        clock += 1.5
    return out[:size]


def project(events: list[tuple[str, dict[str, Any], float]], watch: bool) -> Trajectory:
    trajectory, watchdog = Trajectory(VOCABULARY), Watchdog()
    for seq, (type_, payload, ts) in enumerate(events, 1):
        update = trajectory.feed(type_, enrich(type_, payload, DEFAULT_PRICES), ts=ts, seq=seq)
        if watch:
            for signal in update.signals:
                watchdog.observe(signal)
    return trajectory


def main() -> None:
    events = session(EVENTS)
    feed, watched, snapshot = [], [], []
    for _ in range(RUNS):
        start = time.perf_counter()
        trajectory = project(events, watch=False)
        feed.append(time.perf_counter() - start)
        start = time.perf_counter()
        project(events, watch=True)
        watched.append(time.perf_counter() - start)
        start = time.perf_counter()
        turns = trajectory.turns()
        snapshot.append(time.perf_counter() - start)
    rows = sum(len(t.rows) for t in turns)
    f, w, s = (statistics.median(x) for x in (feed, watched, snapshot))
    common = {"events": EVENTS, "runs": RUNS}
    print(
        json.dumps(
            {"name": "trajectory.feed", "value": round(EVENTS / f), "unit": "events/s", **common}
        )
    )
    print(
        json.dumps(
            {
                "name": "trajectory.feed_with_watchdog",
                "value": round(EVENTS / w),
                "unit": "events/s",
                "ratio_to_feed": round(f / w, 2),
                **common,
            }
        )
    )
    print(
        json.dumps(
            {
                "name": "trajectory.snapshot_all_turns",
                "value": round(s * 1000, 1),
                "unit": "ms",
                "turns": len(turns),
                "rows": rows,
                **common,
            }
        )
    )


if __name__ == "__main__":
    main()
