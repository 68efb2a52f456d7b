"""A hostile repository's shape against the real product: a `yagent run --json -y` process (real
bubblewrap, default preset) against a scripted OpenAI-compatible server on loopback.

- A directory tree deeper than Python's recursion limit (1 100 levels, 2 200 characters: git
  checks such a tree out) in the workspace and inside a repository skill's folder. Every walk on
  the tool path (the shell's change watch, a skill's file list) used to recurse once per level:
  each `run_bash` failed with "RecursionError … unclassified reason". They now walk with a stack:
  commands run, a file they write at the bottom is journaled, and the skill is listed; a batch
  checkout holding one is removed (`tests/scale/test_checkout.py`).
- A command line over the kernel's 128 KiB for one argument: under `-y` it is too long for the
  command policy to read, so nobody approved it and it does not run (ADR 0031) — refused before
  any process, nothing left for `yagent reconcile`. When a person approves it, it cannot be
  exec'd, and the call fails saying nothing ran (`too_large`), not "OUTCOME UNKNOWN"
  (`tests/tools/test_command_chain.py`).
- Tool arguments nested deeper than the JSON parser goes are invalid arguments, not an
  unclassified RecursionError.
- `search` of a FIFO or a device is refused at once, as `read_file` refuses them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.test_attacks_floods import run
from tests.e2e.test_providers import openai_reply
from tests.llm.wire import WireServer
from yagent.llm.scripted import call, calls

DEPTH = 1_100


def deep_tree(root: Path, depth: int = DEPTH) -> str:
    """`depth` nested directories `d` under `root`, made one level at a time (Python's own
    `os.makedirs` recurses); the bottom's path relative to `root`."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(depth):
            os.mkdir("d", dir_fd=fd)
            below = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = below
    finally:
        os.close(fd)
    return "/".join(["d"] * depth)


def remove_deep(root: Path) -> None:
    """`root`'s deep trees removed (pytest's own clean-up uses `shutil.rmtree`, which recurses
    and fails on them; GNU `rm` does not)."""
    subprocess.run(["rm", "-rf", "--", *map(str, root.glob("*"))], check=True, timeout=60)


@pytest.fixture
def cleaned(tmp_path: Path) -> Iterator[Path]:
    """`tmp_path`, emptied with `remove_deep` after the test."""
    yield tmp_path
    remove_deep(tmp_path)


def test_a_tree_deeper_than_the_recursion_limit_leaves_the_tools_working(cleaned: Path) -> None:
    tmp_path = cleaned
    ws = tmp_path / "ws"
    ws.mkdir()
    bottom = deep_tree(ws)
    skill = ws / ".yagent" / "skills" / "deep"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: deep-skill\ndescription: Goes deep.\n---\nBody.\n")
    deep_tree(skill)
    batch = [
        ("run_bash", {"command": "echo hi"}),
        ("run_bash", {"command": f"echo bottom > {bottom}/f.txt"}),
    ]
    sent, results = run(tmp_path, ws, batch)
    assert json.loads(results[0]["content"])["text"] == "hi\n", results[0]
    assert json.loads(results[1]["content"])["receipt"] == "success", results[1]
    assert "RecursionError" not in json.dumps(results)
    assert (ws / bottom / "f.txt").read_text() == "bottom\n"
    assert "deep-skill" in json.dumps(sent[0]["messages"][0])


def test_a_command_line_too_long_to_start_did_not_run_and_needs_no_reconciling(
    tmp_path: Path,
) -> None:
    # one argument over the kernel's 128 KiB (MAX_ARG_STRLEN): `bash -c LINE` cannot be exec'd.
    # It was reported "OUTCOME UNKNOWN — may or may not have taken effect", its key marked for
    # `yagent reconcile`, though no process ever ran. Too long for the command policy to read,
    # `-y` does not approve it (ADR 0031): refused before any process starts.
    ws = tmp_path / "ws"
    ws.mkdir()
    line = "echo " + "x" * 200_000 + " > out.txt"
    _, results = run(
        tmp_path, ws, [("run_bash", {"command": line}), ("run_bash", {"command": "echo ok"})]
    )
    failed = json.loads(results[0]["content"])
    assert failed["kind"] == "needs_approval", failed
    assert "OUTCOME UNKNOWN" not in failed["error"]
    assert "outcome" not in failed, failed
    assert json.loads(results[1]["content"])["text"] == "ok\n"
    assert not (ws / "out.txt").exists()
    home = tmp_path / "home"
    env = {**os.environ, "YAGENT_HOME": str(home), "HOME": str(tmp_path)}
    pending = subprocess.run(
        [sys.executable, "-m", "yagent.cli", "reconcile"],
        env=env,
        cwd=ws,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert pending.returncode == 0, pending.stderr
    assert "no side effect needs reconciliation" in pending.stdout


def test_arguments_nested_deeper_than_the_parser_goes_are_invalid_arguments(
    tmp_path: Path,
) -> None:
    # the model controls the arguments' text: json.loads raised RecursionError, which failed the
    # call as "unknown … report it" instead of telling the model its arguments were not usable
    deep = '{"path": ' + '{"a": ' * 100_000 + "1" + "}" * 100_000 + "}"
    turns = [
        openai_reply(calls([("read_file", deep, "c0")])),
        openai_reply(call("agent_exit", json.dumps({"reason": "done"}), call_id="x")),
    ]
    home = tmp_path / "home"
    home.mkdir()
    with WireServer(turns) as server:
        (home / "config.toml").write_text(
            f'[llm]\nprovider = "openai"\nmodel = "gpt-test"\nbase_url = "{server.url}/v1"\n'
        )
        env = {**os.environ, "YAGENT_HOME": str(home), "HOME": str(tmp_path)}
        env["OPENAI_API_KEY"] = "sk-test-not-real"
        done = subprocess.run(
            [sys.executable, "-m", "yagent.cli", "run", "--json", "-C", str(tmp_path), "go"],
            env=env,
            capture_output=True,
            text=True,
            timeout=110,
        )
    assert done.returncode == 0, done.stderr
    results = [json.loads(x) for x in done.stdout.splitlines() if '"tool_result"' in x]
    refused = json.loads(results[0]["content"])
    assert refused["kind"] == "invalid_args", refused
    assert "RecursionError" not in refused["error"]


def test_search_of_a_fifo_or_a_device_is_refused_not_read_until_the_timeout(
    tmp_path: Path,
) -> None:
    # read_file refused them; search handed them to ripgrep, which waited on the FIFO's writer
    # or read /dev/zero until SEARCH_TIMEOUT (30 s each), then said "timed out"
    ws = tmp_path / "ws"
    ws.mkdir()
    os.mkfifo(ws / "fifo")
    batch = [
        ("search", {"pattern": "x", "path": "fifo"}),
        ("search", {"pattern": "x", "path": "/dev/zero"}),
    ]
    _, results = run(tmp_path, ws, batch)
    for result in results[:2]:
        refused = json.loads(result["content"])
        assert refused["kind"] == "invalid_args", refused
        assert "not a regular file or a directory" in refused["error"]
