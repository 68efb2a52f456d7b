"""The `yagent` command, in-process and as a real process."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from yagent.cli import main
from yagent.cli.demo import TASK, prepare
from yagent.cli.runner import normalise
from yagent.llm.replay import Recording
from yagent.llm.scripted import call

DEMO = Path(__file__).resolve().parents[2] / "demo"


def test_version_and_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert "yagent" in capsys.readouterr().out
    assert main(["--help"]) == 0
    assert "doctor" in capsys.readouterr().out
    assert main(["nope"]) == 2


def test_run_json_replay_and_sessions(
    tmp_path: Path, home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(Path(sys.executable).parent) + os.pathsep + os.environ["PATH"])
    ws = prepare(DEMO / "project", tmp_path)
    status = main(
        ["run", "--json", "-y", "-C", str(ws), "--replay", str(DEMO / "recording.json"), TASK]
    )
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.strip()]
    assert status == 0
    types = [line["type"] for line in lines]
    assert "tool_call" in types
    assert types[-2:] == ["result", "replay"]
    assert lines[-1]["divergences"] == []
    result = lines[-2]
    assert result["status"] == "finished"
    assert "calc.average" in result["deliverable"]
    assert all(
        "delegation_id" in line
        for line in lines
        if line["type"] not in ("schema", "result", "replay")
    )
    monkeypatch.chdir(ws)
    assert main(["sessions"]) == 0
    listing = capsys.readouterr().out
    assert result["session_id"][:12] in listing
    assert main(["sessions", "show", result["session_id"][:12], "--json"]) == 0
    exported = json.loads(capsys.readouterr().out)
    assert exported["session"]["id"] == result["session_id"]
    assert main(["sessions", "show", "zzzz"]) == 2


def test_replay_command_detects_divergence(
    tmp_path: Path, home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(Path(sys.executable).parent) + os.pathsep + os.environ["PATH"])
    ws = prepare(DEMO / "project", tmp_path)
    assert (
        main(["run", "--json", "-y", "-C", str(ws), "--replay", str(DEMO / "recording.json"), TASK])
        == 0
    )
    sid = json.loads(capsys.readouterr().out.splitlines()[-2])["session_id"]
    saved = tmp_path / "rec.json"
    assert main(["replay", sid, "--save", str(saved)]) == 0
    assert len(Recording.load(saved).steps("coding")) == 6
    other = prepare(DEMO / "project", tmp_path / "other")
    (other / "calc.py").write_text("def average(v):\n    return 0\n")
    monkeypatch.chdir(other)
    status = main(["replay", sid, "-y"])
    out = capsys.readouterr().out
    assert status == 1
    assert "divergence" in out


def test_config_error_is_exit_2(
    tmp_path: Path, home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home.mkdir(parents=True)
    (home / "config.toml").write_text("[llm]\nbogus = 1\n")
    assert main(["run", "-C", str(tmp_path), "hello"]) == 2
    assert "llm.bogus" in capsys.readouterr().err


def test_no_provider_message_says_how_to_configure(
    tmp_path: Path, home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from yagent.app import engines

    monkeypatch.setattr(engines, "OLLAMA_URL", "http://127.0.0.1:9")
    assert main(["run", "-C", str(tmp_path), "hello"]) == 2
    err = capsys.readouterr().err
    assert "no model provider is configured" in err
    assert "OPENAI_API_KEY" in err


def test_doctor_reports_each_check(
    tmp_path: Path, home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from yagent.app import engines

    monkeypatch.setattr(engines, "OLLAMA_URL", "http://127.0.0.1:9")
    monkeypatch.chdir(tmp_path)
    status = main(["doctor"])
    out = capsys.readouterr().out
    assert status == 1, "no provider is a failure"
    for check in ("config", "provider", "settings", "ripgrep", "chromium", "bwrap"):
        assert check in out
    assert "[sandbox]" in out  # a detail is shown as text: rich markup would eat the brackets


def test_normalise_masks_volatile_text() -> None:
    text = '{"duration": 1.234, "text": "3 passed in 0.51s", "p": "/tmp/abc/x"}'
    assert normalise(text) == '{"duration": <t>, "text": "3 passed in <t>s", "p": "<tmp>"}'
    assert normalise('{"total_bytes": 98, "shown_bytes": 99}') == (
        '{"total_bytes": <n>, "shown_bytes": <n>}'
    )


def _hanging_run(
    tmp_path: Path, home: Path, command: str, drain_budget: float = 5.0
) -> tuple[subprocess.Popen[bytes], int]:
    """A real `yagent run` whose only tool call hangs; returns it and the command's shell pid."""
    ws = tmp_path / "ws"
    ws.mkdir()
    # The test watches the command's host pid through a file outside the workspace: both are out
    # of sight inside the default preset's sandbox (own pid namespace, private /tmp), so it runs
    # unconfined. The sandboxed kill path is tested in tests/tools/test_bash_sandbox.py.
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(f'[agent]\npreset = "yolo"\ndrain_budget = {drain_budget}\n')
    marker = tmp_path / "pid"
    rec = Recording()
    rec.add(
        "coding",
        call("run_bash", json.dumps({"command": f"echo $$ > {marker}; {command}", "timeout": 600})),
    )
    path = tmp_path / "rec.json"
    rec.save(path)
    env = {**os.environ, "YAGENT_HOME": str(home)}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "yagent.cli",
            "run",
            "-y",
            "-C",
            str(ws),
            "--replay",
            str(path),
            "hang",
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 60
    while not marker.exists() or not marker.read_text().strip():
        assert time.monotonic() < deadline, "the tool never started"
        time.sleep(0.1)
    return proc, int(marker.read_text())


def _gone(pid: int, within: float = 5.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        stat = Path(f"/proc/{pid}/stat")
        if not stat.exists() or stat.read_text().split()[2] == "Z":
            return True
        time.sleep(0.05)
    return False


def test_first_ctrl_c_cancels_the_turn_and_its_process_group(tmp_path: Path, home: Path) -> None:
    # the hanging command outlasts the drain: the turn is force-stopped (0.5 s, not the default 5)
    proc, shell = _hanging_run(tmp_path, home, "sleep 300", drain_budget=0.5)
    proc.send_signal(signal.SIGINT)
    proc.wait(60)
    assert proc.returncode == 130
    assert _gone(shell), "the cancelled command's group must be killed"


def test_second_ctrl_c_kills_live_groups_and_exits(tmp_path: Path, home: Path) -> None:
    # The group ignores SIGTERM, so the cancellation waits out its kill grace: the second
    # Ctrl-C comes while the turn is still winding down, and must end everything at once.
    proc, shell = _hanging_run(tmp_path, home, "trap '' TERM; sleep 300")
    proc.send_signal(signal.SIGINT)
    assert proc.stderr is not None
    said = b""
    while b"Ctrl-C again within 2s" not in said:  # the first was taken (not merged with the next)
        line = proc.stderr.readline()
        assert line, f"yagent ended after one Ctrl-C: {said!r}"
        said += line
    assert proc.poll() is None
    proc.send_signal(signal.SIGINT)
    proc.wait(60)
    assert proc.returncode == 130
    assert b"killed" in proc.stderr.read()
    assert _gone(shell)


def test_resume_without_sessions_says_so(
    tmp_path: Path, home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["resume"]) == 2
    assert "no session to resume" in capsys.readouterr().err


def test_resume_continues_the_latest_session(
    tmp_path: Path, home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(Path(sys.executable).parent) + os.pathsep + os.environ["PATH"])
    ws = prepare(DEMO / "project", tmp_path)
    assert (
        main(["run", "--json", "-y", "-C", str(ws), "--replay", str(DEMO / "recording.json"), TASK])
        == 0
    )
    sid = json.loads(capsys.readouterr().out.splitlines()[-2])["session_id"]
    seen: list[str | None] = []

    async def interactive(
        opts: object, *, plain: bool, session_id: str | None = None, resume: object = None
    ) -> int:
        seen.append(session_id)
        return 0

    monkeypatch.setattr("yagent.cli.repl.interactive", interactive)
    monkeypatch.setattr(sys.stdin, "isatty", lambda: True)  # the prompt is for a terminal
    monkeypatch.chdir(ws)
    assert main(["resume"]) == 0
    assert seen == [sid]
    assert "resuming" in capsys.readouterr().out


def test_in_process_main_returns_the_status_even_after_temporalio_ran(
    tmp_path: Path, home: Path
) -> None:
    """`main` is for in-process callers too: a command that ran after temporalio was imported
    returns its status and leaves the caller's interpreter alone; only the process entry point
    (`yagent.cli.entry`) skips the teardown that crashes temporalio's native client."""
    probe = (
        "import temporalio.client\n"
        "from yagent.app import engines\n"
        "engines.OLLAMA_URL = 'http://127.0.0.1:9'\n"
        "from yagent.cli import main\n"
        "status = main(['doctor'])\n"
        "print('returned', status)\n"
    )
    env = {**os.environ, "YAGENT_HOME": str(home)}
    done = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "returned 1" in done.stdout, done.stdout + done.stderr
