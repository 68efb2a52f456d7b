"""yagent started in a subfolder of a repository works on the repository, as `git` does — and
every command agrees on that: `run` stores its session under the repository's root, so
`sessions` lists it from the same subfolder, and `memory add` there writes the project memory
that runs read (it wrote `<subfolder>/.yagent/memory.json`, which no run ever read); `fanout`
plans its tasks' areas against the repository's root and its session belongs to the repository
(it planned against the subfolder, so `sessions` and `resume` from the root never saw it)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.cli.test_robustness import configure, yagent
from tests.llm.wire import Reply, WireServer, oa_chunk, openai_frames, submitted_frames


def _repo(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "repo"
    deep = root / "src" / "pkg"
    deep.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root, deep


def test_sessions_in_a_subfolder_lists_the_runs_started_there(tmp_path: Path) -> None:
    root, deep = _repo(tmp_path)
    home = tmp_path / "home"
    with WireServer([Reply(events=submitted_frames("all done"))]) as server:
        configure(home, server.url)
        ran = yagent(["run", "fix it"], home, deep)
    assert ran.returncode == 0, ran.stderr
    for where in (deep, root):
        listed = yagent(["sessions"], home, where)
        assert listed.returncode == 0
        assert "fix it" in listed.stdout, (where, listed.stdout)


def test_a_memory_added_in_a_subfolder_reaches_the_runs_of_the_repository(
    tmp_path: Path,
) -> None:
    root, deep = _repo(tmp_path)
    home = tmp_path / "home"
    added = yagent(["memory", "add", "always use tabs"], home, deep)
    assert added.returncode == 0, added.stderr
    assert str(root / ".yagent" / "memory.json") in added.stdout
    assert not (deep / ".yagent").exists()
    listed = yagent(["memory", "list"], home, root)
    assert "always use tabs" in listed.stdout
    with WireServer([Reply(events=submitted_frames("all done"))]) as server:
        configure(home, server.url)
        ran = yagent(["run", "hi"], home, deep)
        assert ran.returncode == 0, ran.stderr
        sent = str(server.received[0].body["messages"])
    assert "always use tabs" in sent


def test_replay_from_a_subfolder_replays_against_the_repository(tmp_path: Path) -> None:
    root, deep = _repo(tmp_path)
    (root / "README.md").write_text("the readme\n")
    home = tmp_path / "home"
    call = {
        "index": 0,
        "id": "c1",
        "type": "function",
        "function": {"name": "read_file", "arguments": json.dumps({"path": "README.md"})},
    }
    read = openai_frames(
        [
            oa_chunk({"role": "assistant", "content": ""}),
            oa_chunk({"tool_calls": [call]}),
            oa_chunk({}, finish="tool_calls"),
        ]
    )
    with WireServer([Reply(events=read), Reply(events=submitted_frames("read it"))]) as server:
        configure(home, server.url)
        ran = yagent(["run", "read the readme"], home, deep)
    assert ran.returncode == 0, ran.stderr
    assert "the readme" in str(server.received[1].body["messages"])
    sid = ran.stdout.rsplit("session ", 1)[1].split()[0]
    replayed = yagent(["replay", sid], home, deep)
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    assert "replay matched the recording" in replayed.stdout


PLAN = '[[task]]\nname = "docs"\nagent = "coding"\ntask = "write the notes"\nwrite = ["docs"]\n'


def _writes(path: str, content: str) -> list[str]:
    call = {
        "index": 0,
        "id": "w1",
        "type": "function",
        "function": {
            "name": "write_file",
            "arguments": json.dumps({"path": path, "content": content}),
        },
    }
    return openai_frames(
        [
            oa_chunk({"role": "assistant", "content": ""}),
            oa_chunk({"tool_calls": [call]}),
            oa_chunk({}, finish="tool_calls"),
        ]
    )


def test_fanout_from_a_subfolder_plans_against_the_repository(tmp_path: Path) -> None:
    root, deep = _repo(tmp_path)
    (root / "docs").mkdir()
    plan = tmp_path / "plan.toml"
    plan.write_text(PLAN)
    checked = yagent(["fanout", str(plan), "--check"], tmp_path / "home", deep)
    assert checked.returncode == 0, checked.stderr
    assert "docs → coding: write: docs" in checked.stdout
    assert "would create" not in checked.stdout, checked.stdout  # root/docs exists


def test_fanout_from_a_subfolder_works_on_the_repository_and_its_session_belongs_to_it(
    tmp_path: Path,
) -> None:
    root, deep = _repo(tmp_path)
    plan = tmp_path / "plan.toml"
    plan.write_text(PLAN)
    home = tmp_path / "home"
    replies = [Reply(events=_writes("docs/notes.md", "n\n")), Reply(events=submitted_frames("ok"))]
    with WireServer(replies) as server:
        configure(home, server.url)
        ran = yagent(["fanout", str(plan), "-y"], home, deep)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert (root / "docs" / "notes.md").read_text() == "n\n"
    assert not (deep / "docs").exists()
    sid = ran.stdout.rsplit("session ", 1)[1].split()[0]
    for where in (root, deep):
        listed = yagent(["sessions"], home, where)
        assert listed.returncode == 0
        assert sid in listed.stdout, (where, listed.stdout)
    again = yagent(["resume", sid], home, root)  # a parallel session: each task said and kept
    assert again.returncode == 0, again.stdout + again.stderr
    assert "docs" in again.stdout
