"""The event path of a step, part by part (issue 17): what publishing an event costs the full app.

`bench_loop`'s `yagent_app` session (each step one `think` call; 100 steps, 10 runs after 2
warm-ups, in one App in a temporary home, its events consumed as the terminal's pump does) with
the CPU of the event loop's thread (`time.thread_time`) summed around each part of the path:
- `pii`: `Safety.for_log_and_display` (the log's and the display's judgement of a payload);
- `telemetry`: `Telemetry.observe_event` (the watchdog; rows only for an exporter);
- `send`: `Dispatcher.send` (the terminal's queue);
- `runtrack`: `RunTrack.observe` (the run's checkpoint bookkeeping);
each reported per step and per published event, with `events.path` their sum and
`events.process_cpu` the whole process's CPU per step of the same runs (the parts are a share
of it). `events.consumer_batches` is how often the consumer was woken per step (each wake-up
drains every event waiting). Then each part alone, on the five payloads a step publishes
(recorded from the run), best of 30 × 1 000 (`events.isolated.*`, µs per step).
Reported figures, no bound: the path is judged against its own history (docs/performance.md,
"Issue 17's second event pass"); the app's bound against the loop is `bench_loop`'s.
The timers add ≈ 1 µs per wrapped call (two clock reads).
"""

from __future__ import annotations

import functools
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio

import bench_loop
from benchlib import Report
from yagent.app import opensession, runtrack, safety, telemetry
from yagent.app.config import load
from yagent.messaging import Dispatcher, Event, dispatcher

STEPS, WARM, RUNS = 100, 2, 10
PARTS = {
    "pii": (safety.Safety, "for_log_and_display"),
    "telemetry": (telemetry.Telemetry, "observe_event"),
    "send": (dispatcher.Dispatcher, "send"),
    "runtrack": (runtrack.RunTrack, "observe"),
}
REPORT = Report()
SPENT: dict[str, float] = dict.fromkeys(PARTS, 0.0)
COUNTS = {"events": 0, "batches": 0}
PAYLOADS: list[tuple[str, dict[str, Any]]] = []


def timed_part(name: str, owner: Any, attr: str) -> None:
    original = getattr(owner, attr)

    @functools.wraps(original)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start = time.thread_time()
        try:
            return original(*args, **kwargs)
        finally:
            SPENT[name] += time.thread_time() - start

    setattr(owner, attr, wrapper)


def record_published() -> None:
    original = opensession.OpenSession.publish

    def publish(self: Any, kind: str, payload: Any) -> None:
        COUNTS["events"] += 1
        if len(PAYLOADS) < 40:
            PAYLOADS.append((kind, dict(payload)))
        original(self, kind, payload)

    opensession.OpenSession.publish = publish  # type: ignore[method-assign]


def count_batches() -> None:
    original = dispatcher.Dispatcher.ready

    async def ready(self: Any, linger: float = 0.0) -> None:
        COUNTS["batches"] += 1
        await original(self, linger)

    dispatcher.Dispatcher.ready = ready  # type: ignore[method-assign]


async def in_app() -> None:
    bench_loop.STEPS, bench_loop.TOTAL = STEPS, STEPS + 1
    with tempfile.TemporaryDirectory(prefix="yagent-bench-events-") as tmp:
        workspace = Path(tmp) / "ws"
        workspace.mkdir()
        async with bench_loop._open_app(Path(tmp) / "home", workspace) as app:
            prepare = bench_loop.yagent_app(app)
            for _ in range(WARM):
                await bench_loop.timed(prepare)
            for name in SPENT:
                SPENT[name] = 0.0
            COUNTS.update(events=0, batches=0)
            cpu = [await bench_loop.timed(prepare) for _ in range(RUNS)]
    steps = RUNS * (STEPS + 1)
    per_event = steps / COUNTS["events"]
    for name, spent in SPENT.items():
        us = spent / steps * 1e6
        REPORT.figure(f"events.{name}", round(us, 1), "us/step", per_event=round(us * per_event, 2))
    path = sum(SPENT.values()) / steps * 1e6
    REPORT.figure("events.path", round(path, 1), "us/step", events_per_step=round(1 / per_event, 2))
    process = statistics.median(cpu) / (STEPS + 1) * 1e6
    REPORT.figure("events.process_cpu", round(process, 1), "us/step", runs=RUNS, steps=STEPS + 1)
    REPORT.figure("events.consumer_batches", round(COUNTS["batches"] / steps, 3), "per step")


def best(call: Callable[[], object], n: int = 1000, reps: int = 30) -> float:
    fastest = float("inf")
    for _ in range(reps):
        start = time.thread_time()
        for _ in range(n):
            call()
        fastest = min(fastest, (time.thread_time() - start) / n)
    return fastest * 1e6


def isolated(judge: safety.Safety) -> None:
    step = [(k, p) for k, p in PAYLOADS if p.get("step") == 2][:5]
    parts = {"pii": 0.0, "telemetry": 0.0, "send_receive": 0.0}
    for kind, payload in step:
        event = Event(kind, payload)
        parts["pii"] += best(lambda p=payload: judge.for_log_and_display(p))
        fresh = best(lambda: telemetry.Telemetry("s", rows=False))

        def watch(e: Event = event) -> None:
            telemetry.Telemetry("s", rows=False).observe_event(e)

        parts["telemetry"] += best(watch) - fresh
        queue = Dispatcher(maxsize=10**9)

        def send(e: Event = event, q: Dispatcher = queue) -> None:
            q.send(e)
            q.next_in_order()

        parts["send_receive"] += best(send)
    for name, us in parts.items():
        REPORT.figure(f"events.isolated.{name}", round(us, 2), "us/step", events=len(step))


def main() -> int:
    for name, (owner, attr) in PARTS.items():
        timed_part(name, owner, attr)
    record_published()
    count_batches()
    anyio.run(in_app)
    with tempfile.TemporaryDirectory(prefix="yagent-bench-events-") as tmp:
        home, workspace = Path(tmp) / "home", Path(tmp) / "ws"
        workspace.mkdir()
        config = load(home=home, workspace=workspace, env={})
        judge = safety.build(config, workspace)
    for owner, attr in PARTS.values():  # the parts alone: without the timers
        setattr(owner, attr, getattr(owner, attr).__wrapped__)
    isolated(judge)
    return REPORT.exit_code()


if __name__ == "__main__":
    sys.exit(main())
