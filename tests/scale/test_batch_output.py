"""`yagent batch --json`'s stream: a real `yagent batch` process, real checkouts, the scripted
model (`tests.scale.modelserver`), stdout a real pipe.

- A task whose run publishes more events than a display queue holds (a Director delegating to
  eight Coding runs of 30 commands: ≈ 1 500 events): the stream is every change of every task
  and the `batch` line last; nothing says an event was dropped — the batch's runs have no
  display, so nothing is queued for one (it once filled the queue and warned "event queue full:
  dropping … events" on stderr for each kind).
- A reader that closes the pipe after the first line: the batch stops as on Ctrl-C (its records
  stay resumable), one line on stderr says so, exit 141, no traceback.
- A reader that never reads (the pipe full before the batch starts): the batch runs to its end,
  waits `[agent] stdout_wait` seconds for the reader — the setting, as `run` does (it waited a
  fixed 60 s) — then exits 74 with one line on stderr; its records are kept.
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys

from tests.scale.conftest import World
from tests.scale.modelserver import home_config


def director_task(children: int, commands: int) -> str:
    child = "\\n".join(f"@bash echo {i}" for i in range(commands))
    return "go\n@delegate " + " || ".join(f"coding:do\\n{child}" for _ in range(children))


def test_a_large_run_in_a_batch_drops_nothing_and_says_nothing_dropped(world: World) -> None:
    rows = [
        {"id": "big", "repo": "repo", "task": director_task(8, 30), "agent": "director"},
        {"id": "small", "repo": "repo", "task": "@write a.txt a"},
    ]
    done = world.yagent(["batch", str(world.tasks("t.jsonl", rows)), "--json"])
    assert done.returncode == 0, done.stderr[-3000:]
    assert "dropping" not in done.stderr, done.stderr[-3000:]
    assert "queue full" not in done.stderr
    lines = [json.loads(x) for x in done.stdout.splitlines()]
    assert lines[-1]["type"] == "batch"
    assert lines[-1]["counts"]["completed"] == 2
    for task in ("big", "small"):
        states = [x["state"] for x in lines if x.get("type") == "task" and x["id"] == task]
        assert states == ["running", "completed"], (task, lines)
    got = world.yagent(["batch", "results", str(lines[-1]["batch_id"]), "--json"])
    big = next(json.loads(x) for x in got.stdout.splitlines() if '"big"' in x)
    assert len(big["trace"]) > 1024  # more events than the display queue held


def test_a_closed_pipe_stops_the_batch_with_141(world: World) -> None:
    rows = [
        {"id": f"t{i}", "repo": "repo", "task": "go\n@bash sleep 1\n@bash echo done"}
        for i in range(3)
    ]
    path = world.tasks("t.jsonl", rows)
    proc = subprocess.Popen(
        [sys.executable, "-m", "yagent.cli", "batch", str(path), "--json", "--max-parallel", "1"],
        env=world.env(),
        cwd=world.tmp,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().startswith('{"type": "task"')
        proc.stdout.close()  # the reader goes away while the first task runs
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)
    assert proc.returncode == 141, err[-3000:]
    assert "Traceback" not in err, err
    assert "stdout was closed" in err, err


def full_pipe() -> tuple[int, int]:
    """A pipe whose buffer is already full: every write to it blocks until someone reads."""
    read, write = os.pipe()
    flags = fcntl.fcntl(write, fcntl.F_GETFL)
    fcntl.fcntl(write, fcntl.F_SETFL, flags | os.O_NONBLOCK)
    try:
        while True:
            os.write(write, b"x" * 4096)
    except BlockingIOError:
        pass
    fcntl.fcntl(write, fcntl.F_SETFL, flags)  # the command gets an ordinary, blocking stdout
    return read, write


def test_a_reader_that_never_reads_waits_the_configured_stdout_wait_then_74(
    world: World,
) -> None:
    (world.home / "config.toml").write_text(home_config(world.model.url, "stdout_wait = 1\n"))
    path = world.tasks("t.jsonl", [{"id": "one", "repo": "repo", "task": "@write a.txt a"}])
    read, write = full_pipe()
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "yagent.cli", "batch", str(path), "--json"],
            env=world.env(),
            cwd=world.tmp,
            stdin=subprocess.DEVNULL,
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
        )
        os.close(write)
        try:
            _, err = proc.communicate(timeout=100)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(30)
    finally:
        os.close(read)
    assert proc.returncode == 74, err[-3000:]
    assert "Traceback" not in err, err
    assert "stdout was not read for 1s" in err, err
    batch_id = err.split("batch ", 1)[1].split("'")[0]
    status = world.yagent(["batch", "status", batch_id])
    assert "one" in status.stdout, status.stdout + status.stderr
