"""The app's step, part by part, beside the in-memory loop's (issue 17): where the µs go.

`bench_loop`'s two yagent columns — the in-memory loop (`yagent`) and the full app
(`yagent_app`) — each run `STEPS` steps (a `think` call each, then `agent_exit`), `RUNS` times
after `WARM` warm-ups, with the CPU of the event loop's thread (`time.thread_time`) charged to
EXCLUSIVE sections: a section's clock stops while a section inside it runs and restarts when it
returns, and a coroutine's section stops while it is suspended (its awaits are driven through a
wrapper that stops the clock before each yield) — so the parts add up to the run and nothing is
counted twice. What no section claims is the event loop's own turns (`evloop`, asyncio's
`_run_once` with the callbacks of coroutines outside every section) and `other`.

Each part is printed as `perstep.<column>.<part>` in µs per step; `perstep.<column>.total` is the
sum of the parts, `perstep.<column>.process` the process's CPU per step of the same runs (every
thread; the sections' clocks cost ≈ 1 µs a wrapped call, so both run above `bench_loop`'s
figure). Reported figures, no bound: the bound on the whole step is `bench_loop`'s
(`loop.app_over_loop.*`); docs/performance.md ("Issue 17's seventh pass") reads this table.
`STEPS` comes from the command line (`python bench/bench_perstep.py 10`; 100 by default).
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import sys
import tempfile
import time
from collections.abc import Callable, Generator
from pathlib import Path
from typing import Any

import anyio

import bench_loop
from benchlib import Report
from yagent.agents import economy, loop
from yagent.app import opensession, recorder, runtrack, safety, steplog, telemetry, turn
from yagent.kernel.judge import invoke
from yagent.messaging import dispatcher
from yagent.tools import adapter

WARM, RUNS = 2, 10
REPORT = Report()
SPENT: dict[str, float] = {}
STACK: list[list[Any]] = [["other", 0.0]]  # [section, when its clock last started]
clock = time.thread_time

# (part, owner, attribute): each wrapped as an exclusive section
PARTS: list[tuple[str, Any, str]] = [
    ("store", steplog.StepLog, "_write"),  # the session store's commits
    ("steplog", steplog.StepLog, "event"),
    ("steplog", steplog.StepLog, "message"),
    ("steplog", steplog.StepLog, "usage"),
    ("publish", opensession.OpenSession, "publish"),
    ("pii", safety.Safety, "for_log_and_display"),
    ("pii", safety.Safety, "for_log"),
    ("pii", safety.Safety, "for_display"),
    ("telemetry", telemetry.Telemetry, "observe_event"),
    ("dispatcher", dispatcher.Dispatcher, "send"),
    ("consumer", dispatcher.Dispatcher, "next_in_order"),
    ("consumer", dispatcher.Dispatcher, "ready"),
    ("checkpoint", runtrack.RunTrack, "observe"),
    ("checkpoint", runtrack.RunTrack, "step"),
    ("checkpoint", runtrack.RunTrack, "end"),
    ("economy", economy.Economy, "before_request"),
    ("economy", economy.Economy, "admit"),
    ("usage", recorder.Recorder, "usage"),
    ("messages", recorder.Recorder, "message"),
    ("system_prompt", turn, "_system"),
    ("run_setup_and_end", turn, "run_task"),
    ("loop_statements", loop, "run_agent_loop"),
    ("judgement_ring", invoke.Chain, "judge"),
    ("adapter_call", adapter.Adapter, "call"),
    ("adapter_call", invoke.Chain, "invoke"),
    ("executor", adapter.Adapter, "_run"),
    ("evloop", asyncio.base_events.BaseEventLoop, "_run_once"),
]


def _charge() -> float:
    now = clock()
    top = STACK[-1]
    SPENT[top[0]] = SPENT.get(top[0], 0.0) + now - top[1]
    return now


def enter(part: str) -> None:
    STACK.append([part, _charge()])


def leave() -> None:
    now = _charge()
    STACK.pop()
    STACK[-1][1] = now


class Section:
    """An awaitable driving `coro` with its part's clock running only while it runs."""

    def __init__(self, coro: Any, part: str) -> None:
        self.coro, self.part = coro, part

    def __await__(self) -> Generator[Any, Any, Any]:
        sent: Any = None
        thrown: BaseException | None = None
        while True:
            enter(self.part)
            try:
                yielded = self.coro.throw(thrown) if thrown is not None else self.coro.send(sent)
            except StopIteration as done:
                leave()
                return done.value
            except BaseException:
                leave()
                raise
            leave()
            try:
                sent, thrown = (yield yielded), None
            except BaseException as exc:  # delivered into the coroutine at its next turn
                sent, thrown = None, exc


def wrap(part: str, owner: Any, attr: str) -> None:
    original: Callable[..., Any] = getattr(owner, attr)
    if inspect.iscoroutinefunction(original):

        @functools.wraps(original)
        async def run_async(*args: Any, **kwargs: Any) -> Any:
            return await Section(original(*args, **kwargs), part)

        setattr(owner, attr, run_async)
        return

    @functools.wraps(original)
    def run(*args: Any, **kwargs: Any) -> Any:
        enter(part)
        try:
            return original(*args, **kwargs)
        finally:
            leave()

    setattr(owner, attr, run)


async def measure(steps: int) -> None:
    bench_loop.STEPS, bench_loop.TOTAL = steps, steps + 1
    with tempfile.TemporaryDirectory(prefix="yagent-bench-perstep-") as tmp:
        workspace = Path(tmp) / "ws"
        workspace.mkdir()
        async with bench_loop._open_app(Path(tmp) / "home", workspace) as app:
            columns = {
                "yagent": bench_loop.yagent(workspace, two_tools=False),
                "yagent_app": bench_loop.yagent_app(app),
            }
            for column, prepare in columns.items():
                for _ in range(WARM):
                    await prepare()()
                SPENT.clear()
                STACK[-1][1] = clock()
                cpu = 0.0
                for _ in range(RUNS):
                    enter("untimed")  # built before bench_loop's clock too
                    run = prepare()
                    leave()
                    before = time.process_time()
                    await run()
                    cpu += time.process_time() - before
                    enter("untimed")  # until the next run starts
                    leave()
                SPENT.pop("untimed", None)
                report(column, steps, cpu)


def report(column: str, steps: int, cpu: float) -> None:
    n = RUNS * (steps + 1)
    for part, spent in sorted(SPENT.items(), key=lambda kv: -kv[1]):
        REPORT.figure(f"perstep.{column}.{part}.{steps}steps", round(spent / n * 1e6, 1), "us/step")
    total = sum(SPENT.values()) / n * 1e6
    REPORT.figure(f"perstep.{column}.total.{steps}steps", round(total, 1), "us/step", runs=RUNS)
    REPORT.figure(f"perstep.{column}.process.{steps}steps", round(cpu / n * 1e6, 1), "us/step")


def main() -> int:
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    for part, owner, attr in PARTS:
        wrap(part, owner, attr)
    # the names the app and the benchmark imported before the wrapping
    turn.run_agent_loop = loop.run_agent_loop  # type: ignore[attr-defined]
    bench_loop.run_agent_loop = loop.run_agent_loop
    anyio.run(measure, steps)
    return REPORT.exit_code()


if __name__ == "__main__":
    sys.exit(main())
