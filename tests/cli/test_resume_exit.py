"""`yagent resume --json` exits as `yagent run` does (`cli.outcome`), through real processes: an
interrupted run continued to a plain reply by the coding agent is "nothing submitted" (1), one
continued to `agent_exit` is 0 — the same statuses and the same `--json` result line."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.test_robustness import configure, tool_reply, yagent
from tests.llm.wire import Reply, WireServer, text_frames
from yagent.memory import SessionStore

EXIT = {"reason": "done", "summary": "ok"}


def _interrupted(tmp_path: Path) -> tuple[Path, Path, str]:
    """A run whose second model call fails (no reply scripted): interrupted by an error."""
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    with WireServer([tool_reply("a", "run_bash", {"command": "true"})]) as server:
        configure(home, server.url)
        done = yagent(["run", "-y", "-C", str(ws), "--json", "go"], home, ws)
    assert done.returncode == 1, done.stdout + done.stderr
    with SessionStore(home / "sessions.db") as store:
        sid = store.list_sessions(limit=1)[0].id
    return ws, home, sid


def _result(stdout: str) -> dict[str, object]:
    last = json.loads(stdout.splitlines()[-1])
    assert last["type"] == "result"
    return dict(last)


def test_resume_that_ends_with_a_plain_reply_exits_1_like_run(tmp_path: Path) -> None:
    ws, home, sid = _interrupted(tmp_path)
    with WireServer([Reply(events=text_frames("all done")) for _ in range(3)]) as server:
        configure(home, server.url)
        done = yagent(["resume", sid, "--json", "-y"], home, ws)
    assert "continue the interrupted run" in done.stderr
    assert done.returncode == 1, done.stdout + done.stderr
    result = _result(done.stdout)
    assert result["status"] == "answered"
    assert result["is_error"] is True


def test_resume_that_submits_exits_0(tmp_path: Path) -> None:
    ws, home, sid = _interrupted(tmp_path)
    with WireServer([tool_reply("x", "agent_exit", EXIT)]) as server:
        configure(home, server.url)
        done = yagent(["resume", sid, "--json", "-y"], home, ws)
    assert done.returncode == 0, done.stdout + done.stderr
    result = _result(done.stdout)
    assert result["status"] == "finished"
    assert result["is_error"] is False


def test_resume_off_a_terminal_continues_once_and_exits_with_the_run_status(
    tmp_path: Path,
) -> None:
    """Without a terminal (stdin not a tty, no `--json`) there is no prompt to continue into:
    the interrupted run is continued once, shown as `yagent run` shows it, and the exit status
    is the run's — not prompt-toolkit's "Input is not a terminal" and 0."""
    ws, home, sid = _interrupted(tmp_path)
    with WireServer([Reply(events=text_frames("all done")) for _ in range(3)]) as server:
        configure(home, server.url)
        answered = yagent(["resume", sid, "-y"], home, ws)
    assert answered.returncode == 1, answered.stdout + answered.stderr
    assert "all done" in answered.stdout
    assert "not a terminal" not in answered.stdout + answered.stderr
    with WireServer([tool_reply("x", "agent_exit", EXIT)]) as server:
        configure(home, server.url)
        (tmp_path / "second").mkdir()
        ws2, home2, sid2 = _interrupted(tmp_path / "second")
        configure(home2, server.url)
        submitted = yagent(["resume", sid2, "-y"], home2, ws2)
    assert submitted.returncode == 0, submitted.stdout + submitted.stderr
    with WireServer([]) as server:
        configure(home2, server.url)
        nothing = yagent(["resume", sid2, "-y"], home2, ws2)
    assert nothing.returncode == 0, nothing.stdout + nothing.stderr
    assert "nothing to continue" in nothing.stderr
    assert "not a terminal" not in nothing.stdout + nothing.stderr
