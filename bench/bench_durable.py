"""What durability costs a run: a per-step checkpoint and a side-effecting call's bookkeeping.

The issue's own figure (acquire → complete, memory and SQLite, 1 and 4 processes) is
`bench_sideeffect.py`. This one measures the wiring on top, in `home/durable.db` (SQLite, WAL,
synchronous=FULL, the default):
- `durable.checkpoint_step`: one `RunTrack.step` — a snapshot of a 20-step run saved through the
  checkpoint Committer (what every agent step pays before its model request);
- `durable.side_effect_call`: one side-effecting call through `EffectRunner` (acquire, renew,
  apply, complete, event) around an executor that does nothing — the bookkeeping a `git push`
  pays on top of the push (no peer: no other agent framework records side effects).
Medians of several runs; one JSON line per figure.
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

from yagent.app.durable import Durable
from yagent.app.runtrack import open_track
from yagent.kernel.judge.invoke import Call
from yagent.memory import SessionStore
from yagent.tools.effects import Found

RUNS = 3
STEPS = 20
CALLS = 300


def _emit(name: str, value: float, unit: str, **extra: object) -> None:
    print(json.dumps({"name": name, "value": round(value, 3), "unit": unit, **extra}))
    sys.stdout.flush()


async def _steps(tmp: Path, run: int) -> float:
    durable = Durable(tmp / f"d{run}.db")
    store = SessionStore(tmp / f"s{run}.db")
    try:
        sid = store.create_session(workspace=str(tmp)).id
        track = await open_track(
            durable,
            store=store,
            session_id=sid,
            agent="coding",
            task="bench",
            max_steps=STEPS,
            publish=lambda kind, payload: None,
            materialized=lambda: {"version": 1, "loaded": []},
        )
        start = time.perf_counter()
        for step in range(1, STEPS + 1):
            await track.step(step)
        return (time.perf_counter() - start) / STEPS * 1000
    finally:
        durable.close()
        store.close()


async def _calls(tmp: Path, run: int) -> float:
    durable = Durable(tmp / f"e{run}.db")
    try:
        runner = durable.runner(f"s{run}", lambda kind, payload: None, stopping=lambda: False)
        found = Found("bench", "bench")

        async def executor() -> Any:
            return {"ok": True}

        start = time.perf_counter()
        for i in range(CALLS):
            await runner.run(found, Call("run_bash", {}, call_id=f"c{i}"), executor)
        return (time.perf_counter() - start) / CALLS * 1000
    finally:
        durable.close()


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="bench-durable-") as name:
        tmp = Path(name)
        step = statistics.median(anyio.run(_steps, tmp, run) for run in range(RUNS))
        _emit("durable.checkpoint_step", step, "ms", steps=STEPS, sync="FULL", runs=RUNS)
        call = statistics.median(anyio.run(_calls, tmp, run) for run in range(RUNS))
        _emit("durable.side_effect_call", call, "ms", calls=CALLS, sync="FULL", runs=RUNS)


if __name__ == "__main__":
    main()
