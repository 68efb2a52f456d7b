"""`yagent run --json` with a reader of stdout that stops reading, never resumes, or goes away —
a real `yagent run -y` process against a scripted OpenAI-compatible server on loopback, its
stdout a real pipe.

- A reader that stops: the run goes on (its tool calls run, the model is asked again) while
  nothing is read; once the reader resumes it gets every line, in order, result last, nothing
  dropped, exit 0. The plain display written to a pipe goes on the same way.
- A reader that never resumes: the run ends, waits `[agent] stdout_wait` seconds for the reader,
  then exits 74 with one line on stderr naming the session, saved; no traceback.
- A reader that closes the pipe: the turn is stopped as on Ctrl-C (the next command never
  starts), the session is saved, one line on stderr says so, exit 141; no traceback — with
  `--json` and with the plain display alike (which once raised out of rich's own SIGPIPE exit).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO

import pytest

from tests.e2e.test_providers import openai_reply
from tests.llm.wire import WireServer
from yagent.llm.scripted import AssistantTurn, call, calls

FLOOD = 400  # think calls: their lines are far more than a pipe holds (64 KiB)


@contextmanager
def started(
    tmp_path: Path, turns: Sequence[AssistantTurn], extra: str = "", plain: bool = False
) -> Iterator[tuple[subprocess.Popen[bytes], WireServer, Path, IO[str]]]:
    home, ws = tmp_path / "home", tmp_path / "ws"
    home.mkdir()
    ws.mkdir()
    with WireServer([openai_reply(t) for t in turns]) as server:
        (home / "config.toml").write_text(
            f'[llm]\nprovider = "openai"\nmodel = "gpt-test"\nbase_url = "{server.url}/v1"\n'
            f"step_retries = 0\n{extra}"
        )
        env = {**os.environ, "YAGENT_HOME": str(home), "HOME": str(tmp_path)}
        env["OPENAI_API_KEY"] = "sk-test-not-real"
        for name in ("YAGENT_PROVIDER", "YAGENT_MODEL", "YAGENT_BASE_URL"):
            env.pop(name, None)
        mode = [] if plain else ["--json"]
        command = [sys.executable, "-m", "yagent.cli", "run", *mode, "-y", "-C", str(ws), "go"]
        with (tmp_path / "stderr").open("w+") as err:
            proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=err)
            try:
                yield proc, server, ws, err
            finally:
                if proc.poll() is None:
                    proc.kill()
                proc.wait(30)
                if proc.stdout is not None:
                    proc.stdout.close()


def until(what: str, check: object, limit: float = 60.0) -> None:
    deadline = time.monotonic() + limit
    while not callable(check) or not check():
        assert time.monotonic() < deadline, f"not within {limit:g}s: {what}"
        time.sleep(0.05)


def said(err: IO[str]) -> str:
    err.flush()
    err.seek(0)
    return err.read()


def flood_then(*last: AssistantTurn) -> list[AssistantTurn]:
    thought = "x" * 600
    items = [("think", json.dumps({"thought": f"t{i} {thought}"}), f"c{i}") for i in range(FLOOD)]
    return [calls(items), *last]


def test_a_reader_that_stops_reading_does_not_stop_the_run(tmp_path: Path) -> None:
    turns = flood_then(
        call("run_bash", json.dumps({"command": "echo ran > ran.txt"}), call_id="b"),
        call("agent_exit", json.dumps({"reason": "done"}), call_id="x"),
    )
    with started(tmp_path, turns) as (proc, server, ws, err):
        # nothing is read: the flood's lines fill the pipe long before the command runs
        until("the command after the flood ran", lambda: (ws / "ran.txt").exists())
        until("the model was asked after it", lambda: len(server.received) == 3)
        assert proc.poll() is None  # waiting for its reader, not gone
        out, _ = proc.communicate(timeout=60)
        assert proc.returncode == 0, said(err)[-2000:]
    lines = [json.loads(x) for x in out.decode().splitlines()]
    assert lines[0]["type"] == "schema"
    assert lines[-1]["type"] == "result"
    assert lines[-1]["status"] == "finished"
    assert not [x for x in lines if x.get("type") == "dropped"]
    seen: dict[str, list[str]] = {}
    for line in lines:
        if line.get("type") in ("tool_call", "tool_result"):
            seen.setdefault(str(line.get("call_id")), []).append(line["type"])
    wanted = [f"c{i}" for i in range(FLOOD)] + ["b", "x"]
    assert [c for c in wanted if seen.get(c) != ["tool_call", "tool_result"]] == []


def test_the_plain_display_to_a_pipe_does_not_stop_the_run_either(tmp_path: Path) -> None:
    turns = flood_then(
        call("run_bash", json.dumps({"command": "echo ran > ran.txt"}), call_id="b"),
        call("agent_exit", json.dumps({"reason": "done"}), call_id="x"),
    )
    with started(tmp_path, turns, plain=True) as (proc, server, ws, err):
        until("the command after the flood ran", lambda: (ws / "ran.txt").exists())
        until("the model was asked after it", lambda: len(server.received) == 3)
        out, _ = proc.communicate(timeout=60)
        assert proc.returncode == 0, said(err)[-2000:]
    text = out.decode()
    assert text.count("→ think") + text.count("not shown here") >= 1
    assert "→ run_bash" in text
    assert "finished ·" in text.splitlines()[-1]


def test_a_reader_that_never_resumes_ends_the_command_with_74(tmp_path: Path) -> None:
    turns = flood_then(call("agent_exit", json.dumps({"reason": "done"}), call_id="x"))
    with started(tmp_path, turns, "[agent]\nstdout_wait = 1\n") as (proc, server, _, err):
        proc.wait(90)  # never read
        text = said(err)
        assert proc.returncode == 74, text[-2000:]
    assert len(server.received) == 2  # the run went to its end
    assert "Traceback" not in text
    assert "stdout was not read for 1s" in text, text
    sid = text.split("session ", 1)[1].split()[0]
    shown = subprocess.run(
        [sys.executable, "-m", "yagent.cli", "sessions", "show", sid],
        env={**os.environ, "YAGENT_HOME": str(tmp_path / "home"), "HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert shown.returncode == 0, shown.stderr


@pytest.mark.parametrize("plain", [False, True], ids=["json", "plain"])
def test_a_closed_pipe_stops_the_turn_and_exits_141(tmp_path: Path, plain: bool) -> None:
    turns = [
        call("run_bash", json.dumps({"command": "sleep 1; echo one"}), call_id="a"),
        call("run_bash", json.dumps({"command": "echo two > two.txt"}), call_id="b"),
        call("agent_exit", json.dumps({"reason": "done"}), call_id="x"),
    ]
    with started(tmp_path, turns, plain=plain) as (proc, _, ws, err):
        assert proc.stdout is not None
        while b"run_bash" not in proc.stdout.readline():
            pass
        proc.stdout.close()  # the reader goes away while the first command runs
        proc.wait(90)
        text = said(err)
        assert proc.returncode == 141, text[-2000:]
    assert "Traceback" not in text, text
    assert "Exception" not in text, text
    assert "stdout was closed" in text, text
    assert not (ws / "two.txt").exists()  # the turn stopped: the next command never started


def test_a_stdout_closed_from_the_start_is_refused_with_74(tmp_path: Path) -> None:
    # closed before yagent starts (`>&-`): the store opened next would have taken descriptor 1
    home = tmp_path / "home"
    home.mkdir()
    env = {**os.environ, "YAGENT_HOME": str(home), "HOME": str(tmp_path)}
    line = f"exec {sys.executable} -m yagent.cli run --json -y -C {tmp_path} go >&-"
    done = subprocess.run(["bash", "-c", line], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 74, done.stderr
    assert done.stderr == "yagent: standard output is closed: nothing could be shown (exit 74)\n"
    assert not (home / "sessions.db").exists()  # refused before anything was opened
