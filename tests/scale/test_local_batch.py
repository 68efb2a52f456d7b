"""`yagent batch --engine local`: a real `yagent` process, real checkouts, the scripted model.

Each task writes one file in its own checkout; its result is the patch. Resubmitting the same
file runs nothing (the model is asked nothing more); a task whose checkout cannot be made fails
alone, with git's reason; `status`, `results --patches` and `cancel` read the batch's records.
"""

from __future__ import annotations

import json

from tests.scale.conftest import World, git


def lines(out: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def test_a_local_batch_runs_each_task_in_its_checkout_once(world: World) -> None:
    rows = [
        {"id": f"w{i}", "repo": "repo", "task": f"write it\n@write out{i}.txt content {i}"}
        for i in range(4)
    ]
    path = world.tasks("tasks.jsonl", rows)
    done = world.yagent(["batch", str(path), "--json", "--max-parallel", "2"])
    assert done.returncode == 0, done.stderr[-3000:]
    out = lines(done.stdout)
    final = out[-1]
    assert final["type"] == "batch"
    assert final["new"] is True
    assert final["counts"] == {
        "pending": 0,
        "running": 0,
        "completed": 4,
        "failed": 0,
        "cancelled": 0,
    }
    batch_id = str(final["batch_id"])
    assert git("status", "--porcelain", cwd=world.repo) == ""  # the source is never touched
    asked = world.model.requests

    again = world.yagent(["batch", str(path), "--json"])
    assert again.returncode == 0, again.stderr[-3000:]
    assert lines(again.stdout)[-1]["new"] is False
    assert world.model.requests == asked  # nothing re-ran

    patches = world.tmp / "patches"
    got = world.yagent(["batch", "results", batch_id, "--json", "--patches", str(patches)])
    assert got.returncode == 0, got.stderr
    results = lines(got.stdout)
    assert [r["id"] for r in results] == ["w0", "w1", "w2", "w3"]
    for i, result in enumerate(results):
        assert result["status"] == "completed"
        assert f"+++ b/out{i}.txt" in str(result["patch"])
        assert f"+content {i}" in str(result["patch"])
        assert result["report"] == "did 1 step(s)"
        assert result["usage"]["calls"] == 2  # type: ignore[index]
        assert any(e["type"] == "run_end" for e in result["trace"])  # type: ignore[union-attr]
        assert (patches / f"w{i}.patch").read_text() == result["patch"]
    assert not (world.home / "work" / batch_id).exists() or not any(
        (world.home / "work" / batch_id).iterdir()
    )  # cleaned up

    status = world.yagent(["batch", "status", batch_id])
    assert status.returncode == 0
    assert "4 completed" in status.stdout
    cancel = world.yagent(["batch", "cancel", batch_id])
    assert cancel.returncode == 0
    assert "0 task(s) cancelled" in cancel.stdout


def test_a_task_that_cannot_be_checked_out_fails_alone(world: World) -> None:
    rows = [
        {"id": "good", "repo": "repo", "task": "@write a.txt a"},
        {"id": "bad", "repo": "repo", "ref": "no-such-ref", "task": "@write b.txt b"},
    ]
    done = world.yagent(["batch", str(world.tasks("t.jsonl", rows))])
    assert done.returncode == 1, done.stderr[-3000:]
    assert "good: completed" in done.stdout
    assert "bad: failed (git rev-parse: unknown ref 'no-such-ref')" in done.stdout
    assert "1 completed, 1 failed" in done.stdout


def test_bad_input_exits_2_with_one_line(world: World) -> None:
    bad = world.tmp / "bad.jsonl"
    bad.write_text('{"repo": "repo", "task": "a"}\n{"repo": "repo", "tsk": "b"}\n')
    done = world.yagent(["batch", str(bad)])
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"yagent batch: {bad}:line 2: unknown key 'tsk' (did you mean 'task'?)"
    ]
    unknown = world.yagent(["batch", "status", "b-nothing"])
    assert unknown.returncode == 2
    assert "no batch 'b-nothing'" in unknown.stderr
    assert "Traceback" not in unknown.stderr
    usage = world.yagent(["batch", "status"])
    assert usage.returncode == 2
    local_worker = world.yagent(["worker", "--engine", "local"])
    assert local_worker.returncode == 2
