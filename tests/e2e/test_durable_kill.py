"""The issue's "Done when": kill yagent (SIGKILL) during a side-effecting tool call — a real
`git push` to a local bare repository — resume, and see the push reported as uncertain and not
repeated; then reconcile it.

The `git` on the agent's PATH is a wrapper: after the real push it appends a line to a marker
file and sleeps, so the process dies after the effect and before its bookkeeping — the window
at-most-once has to survive. Every push run appends one line: a repeat would show as two.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from yagent.cli import main
from yagent.kernel.durable import sideeffect
from yagent.llm.replay import Recording
from yagent.llm.scripted import call
from yagent.memory import SessionStore

PUSH = json.dumps({"command": "git push origin HEAD:refs/heads/main", "timeout": 600})
EXIT = json.dumps({"reason": "pushed", "summary": "pushed"})


def git(*args: str, cwd: Path) -> str:
    out = subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True)
    return out.stdout.strip()


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Path]]:
    ws, remote, bin_dir, home = (tmp_path / n for n in ("ws", "remote.git", "bin", "home"))
    for d in (ws, bin_dir, home):
        d.mkdir()
    git("init", "--bare", "-q", str(remote), cwd=tmp_path)
    git("init", "-q", cwd=ws)
    git(
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@t",
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "x",
        cwd=ws,
    )
    git("remote", "add", "origin", str(remote), cwd=ws)
    marker = tmp_path / "pushes.log"
    wrapper = bin_dir / "git"
    wrapper.write_text(
        "#!/bin/sh\n"
        'if [ "$1" = push ]; then\n'
        f'  {shutil.which("git")} "$@" || exit $?\n'
        f'  echo "push $$" >> {marker}\n'
        "  exec sleep 300\n"  # the effect happened; the bookkeeping never will
        "fi\n"
        f'exec {shutil.which("git")} "$@"\n'
    )
    wrapper.chmod(0o755)
    # unconfined (the marker lives outside the workspace); a 1 s lease: quick to lapse
    (home / "config.toml").write_text('[agent]\npreset = "yolo"\neffect_lease = 1\n')
    monkeypatch.setenv("YAGENT_HOME", str(home))
    paths = {"ws": ws, "remote": remote, "home": home, "marker": marker, "tmp": tmp_path}
    yield paths
    for line in marker.read_text().splitlines() if marker.exists() else ():
        pid = int(line.split()[1])
        with contextlib.suppress(ProcessLookupError):  # the wrapper outlived yagent
            os.killpg(os.getpgid(pid), signal.SIGKILL)


def yagent(args: list[str], world: dict[str, Path], **kw: object) -> subprocess.Popen[str]:
    env = {
        **os.environ,
        "YAGENT_HOME": str(world["home"]),
        "PATH": f"{world['tmp'] / 'bin'}{os.pathsep}{os.environ['PATH']}",
    }
    return subprocess.Popen(
        [sys.executable, "-m", "yagent.cli", *args],
        env=env,
        cwd=world["ws"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **kw,  # type: ignore[call-overload]
    )


def recording(world: dict[str, Path], name: str, *turns: object) -> Path:
    rec = Recording()
    for turn in turns:
        rec.add("coding", turn)  # type: ignore[arg-type]
    path = world["tmp"] / name
    rec.save(path)
    return path


def pushes(world: dict[str, Path]) -> int:
    marker = world["marker"]
    return len(marker.read_text().splitlines()) if marker.exists() else 0


async def lapsed(home: Path, key: str) -> bool:
    store = sideeffect.SqliteStore(home / "durable.db")
    try:
        record = await store.lookup(key)
    finally:
        store.close()
    return record is not None and record.expires_at < time.time()


@pytest.mark.timeout(300)
def test_a_push_killed_mid_bookkeeping_is_uncertain_and_never_repeated(
    world: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    first = recording(world, "run.json", call("run_bash", PUSH, call_id="push1"))
    proc = yagent(["run", "--json", "-y", "--replay", str(first), "publish"], world)
    deadline = time.monotonic() + 120
    while pushes(world) == 0:  # the push went through; the wrapper now sleeps
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the push never happened"
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)
    head = git("rev-parse", "HEAD", cwd=world["ws"])
    assert git("rev-parse", "main", cwd=world["remote"]) == head  # the effect is real
    with SessionStore(world["home"] / "sessions.db") as store:
        sid = store.list_sessions(limit=1)[0].id

    # resume: the interrupted run continues; its model side replays the very same call
    again = recording(
        world,
        "resume.json",
        call("run_bash", PUSH, call_id="push1"),
        call("agent_exit", EXIT, call_id="exit"),
    )
    resumed = yagent(["resume", sid, "--json", "-y", "--replay", str(again)], world)
    out, err = resumed.communicate(timeout=120)
    assert resumed.returncode == 0, err
    assert "resume decision: continue the interrupted run" in err
    assert "killed or crashed" in err
    events = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    settled = [e for e in events if e["type"] == "tool_settled"]
    assert [(e["call_id"], e["outcome"]) for e in settled] == [("push1", "uncertain")]
    effects = [e for e in events if e["type"] == "side_effect"]
    assert [e["outcome"] for e in effects] == ["uncertain", "uncertain"]  # settled, then replay
    replayed = next(e for e in events if e["type"] == "tool_result" and e["call_id"] == "push1")
    assert "OUTCOME UNKNOWN" in replayed["content"]
    assert pushes(world) == 1  # never repeated
    assert events[-2]["type"] == "result"
    assert events[-2]["status"] == "finished"

    # reconcile: list it, then record what a person found (the push did happen)
    key = effects[0]["key"]
    deadline = time.monotonic() + 60
    while not anyio.run(lapsed, world["home"], key):  # the dead holder's 1 s lease
        assert time.monotonic() < deadline
        time.sleep(0.1)
    capsys.readouterr()
    assert main(["reconcile", sid, "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [(r["key"], r["tool"]) for r in listed] == [(key, "run_bash")]
    assert main(["reconcile", "--applied", key[:20]]) == 0
    assert "resolved" in capsys.readouterr().out
    assert main(["reconcile", sid]) == 0
    assert "no side effect needs reconciliation" in capsys.readouterr().out
    assert pushes(world) == 1
