"""A batch task's result as a pushed branch: a real `yagent batch --engine local` process, real
checkouts, real `git push` to a bare repository in a temp dir.

A task that changed files is committed (author `yagent <yagent@localhost>`: the test's HOME has
no git identity) on a new branch and pushed after the run, by the batch's step — the result names
the branch, the commit and the remote and still carries the patch. A task that changed nothing
pushes nothing and says so. A branch that already exists on the remote is never overwritten: the
task completes with `push_error`. A bad branch template is refused before anything runs, naming
the line. On Temporal the worker that ran the task pushes its branch in the run's own step.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.scale.conftest import DevServer, World, git
from yagent.scale.tasks import BatchFileError, load


def lines(out: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def bare(world: World, name: str = "remote.git") -> Path:
    path = world.tmp / name
    git("init", "-q", "--bare", str(path), cwd=world.tmp)
    return path


def results(world: World, batch_id: str) -> dict[str, dict[str, object]]:
    got = world.yagent(["batch", "results", batch_id, "--json"])
    assert got.returncode == 0, got.stderr[-3000:]
    return {str(r["id"]): r for r in lines(got.stdout)}


def test_a_changed_task_is_pushed_as_a_branch_and_an_unchanged_one_pushes_nothing(
    world: World,
) -> None:
    remote = bare(world)
    push = {"remote": str(remote), "branch": "yagent/{batch}/{task}"}
    rows = [
        {"id": "w", "repo": "repo", "task": "Write it\n@write out.txt hi there", "push": push},
        {"id": "idle", "repo": "repo", "task": "Look only", "push": push},
    ]
    done = world.yagent(["batch", str(world.tasks("t.jsonl", rows)), "--json"])
    assert done.returncode == 0, done.stderr[-3000:]
    batch_id = str(lines(done.stdout)[-1]["batch_id"])
    found = results(world, batch_id)

    w = found["w"]
    assert w["status"] == "completed"
    assert w["pushed"] is True, w.get("push_error")
    assert w["branch"] == f"yagent/{batch_id}/w"
    assert w["remote"] == str(remote)
    commit = str(w["commit"])
    assert git("rev-parse", f"refs/heads/yagent/{batch_id}/w", cwd=remote) == commit
    assert git("show", f"{commit}:out.txt", cwd=remote) == "hi there"
    assert git("log", "-1", "--format=%an <%ae>", commit, cwd=remote) == "yagent <yagent@localhost>"
    message = git("log", "-1", "--format=%B", commit, cwd=remote)
    assert message.splitlines()[0] == "Write it"
    assert f"{batch_id}/w" in message
    base = git("rev-parse", "main", cwd=world.repo)
    assert git("rev-parse", f"{commit}^", cwd=remote) == base  # one commit on the task's base
    assert "+++ b/out.txt" in str(w["patch"])  # the patch is still the result's

    idle = found["idle"]
    assert idle["status"] == "completed"
    assert idle["pushed"] is False
    assert "nothing changed" in str(idle["push_note"])
    assert "commit" not in idle
    heads = git("for-each-ref", "--format=%(refname)", "refs/heads", cwd=remote).splitlines()
    assert heads == [f"refs/heads/yagent/{batch_id}/w"]
    assert git("status", "--porcelain", cwd=world.repo) == ""  # the source is never touched

    shown = world.yagent(["batch", "results", batch_id])
    assert shown.returncode == 0, shown.stderr
    assert f"pushed yagent/{batch_id}/w {commit[:12]}" in shown.stdout
    assert "nothing pushed: nothing changed" in shown.stdout


def test_an_existing_remote_branch_is_never_overwritten_and_a_dead_remote_is_reported(
    world: World,
) -> None:
    remote = bare(world)
    git("push", "-q", str(remote), "main:refs/heads/taken", cwd=world.repo)
    before = git("rev-parse", "refs/heads/taken", cwd=remote)
    rows = [
        {
            "id": "clash",
            "repo": "repo",
            "task": "@write a.txt a",
            "push": {"remote": str(remote), "branch": "taken"},
        },
        {
            "id": "gone",
            "repo": "repo",
            "task": "@write b.txt b",
            "push": {"remote": str(world.tmp / "no-such.git"), "branch": "yagent/{task}"},
        },
        {
            "id": "named",
            "repo": "repo",
            "task": "@write c.txt c",
            "push": {"remote": "origin", "branch": "yagent/{task}"},
        },
    ]
    done = world.yagent(["batch", str(world.tasks("t.jsonl", rows)), "--json"])
    assert done.returncode == 0, done.stderr[-3000:]  # the tasks completed; their pushes said so
    assert "Traceback" not in done.stderr
    found = results(world, str(lines(done.stdout)[-1]["batch_id"]))

    clash = found["clash"]
    assert clash["status"] == "completed"
    assert clash["pushed"] is False
    assert "already exists" in str(clash["push_error"])
    assert "never overwritten" in str(clash["push_error"])
    assert git("rev-parse", "refs/heads/taken", cwd=remote) == before
    assert "+++ b/a.txt" in str(clash["patch"])

    gone = found["gone"]
    assert gone["status"] == "completed"
    assert gone["pushed"] is False
    assert str(gone["push_error"]).startswith("git ")

    named = found["named"]  # a remote name of the task's repository: its origin is the repo
    assert named["pushed"] is True, named.get("push_error")
    assert git("show", "refs/heads/yagent/named:c.txt", cwd=world.repo) == "c"

    shown = world.yagent(["batch", "results", str(lines(done.stdout)[-1]["batch_id"])])
    assert "push failed: " in shown.stdout


@pytest.mark.parametrize(
    ("push", "why"),
    [
        ({"remote": "origin", "branch": "yagent/{task}/bad..name"}, "not a valid branch name"),
        ({"remote": "origin", "branch": "yagent/{nope}"}, "unknown placeholder {nope}"),
        ({"remote": "origin", "brnach": "x"}, "unknown key 'brnach' (did you mean 'branch'?)"),
        ({"branch": "x"}, "`push.remote` is missing"),
        ("origin", "`push` must be a table"),
    ],
)
def test_a_bad_push_is_refused_at_submit_time_naming_the_line(
    world: World, push: object, why: str
) -> None:
    rows = [
        {"id": "ok", "repo": "repo", "task": "@write a.txt a"},
        {"id": "bad", "repo": "repo", "task": "@write a.txt a", "push": push},
    ]
    done = world.yagent(["batch", str(world.tasks("t.jsonl", rows))])
    assert done.returncode == 2
    assert "line 2" in done.stderr
    assert why in done.stderr
    assert "Traceback" not in done.stderr
    assert world.model.requests == 0  # nothing ran


def test_a_toml_batch_s_push_table_is_every_task_s_default(tmp_path: Path) -> None:
    (tmp_path / "b.toml").write_text(
        '[push]\nremote = "origin"\nbranch = "yagent/{batch}/{task}"\n\n'
        '[[task]]\nid = "a"\nrepo = "r"\ntask = "x"\n\n'
        '[[task]]\nid = "b"\nrepo = "r"\ntask = "y"\n'
        'push = { remote = "up", branch = "fix-{task}" }\n'
        '\n[[task]]\nid = "c"\nrepo = "r"\ntask = "z"\npush = false\n'
    )
    batch = load(tmp_path / "b.toml", batch_id="B1")
    a, b, c = batch.tasks
    assert (a.push_remote, a.push_branch) == ("origin", "yagent/B1/a")
    assert (b.push_remote, b.push_branch) == ("up", "fix-b")
    assert (c.push_remote, c.push_branch) == ("", "")
    again = type(a).from_dict(json.loads(json.dumps(a.to_dict())))
    assert again == a  # the engines' wire carries the push
    (tmp_path / "bad.toml").write_text(
        '[push]\nremote = "o"\nbranch = "a b"\n[[task]]\nrepo = "r"\ntask = "x"\n'
    )
    with pytest.raises(BatchFileError, match=r"task 1: .*not a valid branch name"):
        load(tmp_path / "bad.toml")


@pytest.mark.timeout(300)
def test_on_temporal_the_worker_pushes_the_task_s_branch(
    temporal_server: DevServer, world: World
) -> None:
    remote = bare(world)
    world.worker(temporal_server.address, parallel=2)
    rows = [
        {
            "id": "w",
            "repo": "repo",
            "task": "Write on a worker\n@write t.txt from temporal",
            "push": {"remote": str(remote), "branch": "yagent/{batch}/{task}"},
        }
    ]
    engine = ["--engine", "temporal", "--address", temporal_server.address]
    engine += ["--task-queue", world.queue]
    done = world.yagent(["batch", str(world.tasks("t.jsonl", rows)), "--json", *engine], 240)
    assert done.returncode == 0, done.stderr[-3000:]
    batch_id = str(lines(done.stdout)[-1]["batch_id"])
    got = world.yagent(["batch", "results", batch_id, "--json", *engine])
    assert got.returncode == 0, got.stderr[-3000:]
    (result,) = lines(got.stdout)
    assert result["pushed"] is True, result.get("push_error")
    commit = str(result["commit"])
    assert git("rev-parse", f"refs/heads/yagent/{batch_id}/w", cwd=remote) == commit
    assert git("show", f"{commit}:t.txt", cwd=remote) == "from temporal"
    assert "+++ b/t.txt" in str(result["patch"])
