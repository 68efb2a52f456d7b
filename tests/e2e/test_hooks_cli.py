"""Hooks through the real product (issue 16): `yagent run --json` processes against a local
OpenAI-compatible server that records every request, with hooks that are real shell commands.

Each test is one defect or one contract: a blocking hook's broken JSON is a denial with the raw
output; an unknown event is refused naming the closest; a hook timeout says so (kind `timeout`);
stdout stays in the reason; a question nobody could answer never reads "the user did not
approve"; every event runs, in order, with Claude Code's payload fields; a prompt hook can stop
a run before the model is asked.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tests.e2e.test_providers import openai_reply
from tests.llm.wire import WireServer
from yagent.llm import AssistantTurn
from yagent.llm.scripted import call

EXIT = call("agent_exit", json.dumps({"reason": "done", "summary": "done"}), call_id="x1")


def bash(command: str, call_id: str = "b1") -> AssistantTurn:
    return call("run_bash", json.dumps({"command": command}), call_id=call_id)


def yagent(
    tmp_path: Path, argv: Sequence[str], *, url: str = "http://127.0.0.1:9", hooks: str = ""
) -> subprocess.CompletedProcess[str]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    (home / "config.toml").write_text(
        f'[llm]\nprovider = "openai"\nmodel = "gpt-test"\nbase_url = "{url}/v1"\n'
        f"step_retries = 0\n{hooks}"
    )
    env = {**os.environ, "YAGENT_HOME": str(home), "OPENAI_API_KEY": "sk-test-not-real"}
    env["COLUMNS"] = "400"  # doctor's table on one line a row
    for name in ("YAGENT_PROVIDER", "YAGENT_MODEL", "YAGENT_BASE_URL"):
        env.pop(name, None)
    return subprocess.run(
        [sys.executable, "-m", "yagent.cli", *argv],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


def run(
    tmp_path: Path, turns: Sequence[AssistantTurn], hooks: str, *, task: str = "go"
) -> tuple[subprocess.CompletedProcess[str], list[dict[str, Any]], list[Any]]:
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    with WireServer([openai_reply(t) for t in turns]) as server:
        done = yagent(
            tmp_path, ["run", "--json", "-y", "-C", str(ws), task], url=server.url, hooks=hooks
        )
        received = [r.body for r in server.received]
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    lines = [json.loads(x) for x in done.stdout.splitlines() if x.strip()]
    return done, lines, received


def result_of(lines: list[dict[str, Any]], call_id: str) -> tuple[dict[str, Any], dict[str, Any]]:
    line = next(x for x in lines if x["type"] == "tool_result" and x["call_id"] == call_id)
    return line, json.loads(line["content"])


def hook(event: str, command: str, *, matcher: str = "run_bash", extra: str = "") -> str:
    return (
        f'[[hooks]]\nname = "{event}"\nevent = "{event}"\nmatcher = "{matcher}"\n'
        f"command = '''{command}'''\n{extra}\n"
    )


def test_malformed_json_from_a_blocking_hook_is_a_denial_with_the_raw_output(
    tmp_path: Path,
) -> None:
    answer = """echo '{"decision":"deny","reason":"no curl",}'"""
    done, lines, _ = run(tmp_path, [bash("touch ran.txt"), EXIT], hook("pre_tool_use", answer))
    assert done.returncode == 0, done.stderr[-2000:]
    line, body = result_of(lines, "b1")
    assert not line["ok"]
    assert not (tmp_path / "ws" / "ran.txt").exists(), "the call did not run"
    assert "not valid JSON" in body["error"]
    assert '"reason":"no curl",}' in body["error"], "the raw output is in the reason"


def test_unknown_hook_events_are_refused_with_the_closest_name(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    for wrong, closest in (("post_tool_uze", "post_tool_use"), ("PreToolUze", "PreToolUse")):
        done = yagent(tmp_path, ["run", "--json", "-C", str(ws), "go"], hooks=hook(wrong, "true"))
        assert done.returncode == 2
        assert f"did you mean '{closest}'" in done.stderr
        assert "Traceback" not in done.stderr
    doctor = yagent(tmp_path, ["doctor"], hooks=hook("session_stat", "true"))
    assert doctor.returncode == 1, "doctor: a required check failed"
    row = next(x for x in doctor.stdout.splitlines() if "config" in x)
    assert "FAIL" in row
    assert "did you mean 'session_start'" in row


def test_a_hook_timeout_is_reported_as_a_hook_timeout(tmp_path: Path) -> None:
    slow = hook("pre_tool_use", "sleep 20", matcher="run_bash", extra="timeout = 0.5")
    _, lines, _ = run(tmp_path, [bash("touch ran.txt"), EXIT], slow)
    line, body = result_of(lines, "b1")
    assert (line["ok"], line["kind"], body["kind"]) == (False, "timeout", "timeout")
    assert "hook timeout: hook 'pre_tool_use' timed out after 0.5s" in body["error"]
    assert not (tmp_path / "ws" / "ran.txt").exists()


def test_a_hooks_stdout_is_kept_in_the_reason(tmp_path: Path) -> None:
    says = "echo 'see docs/POLICY.md'; echo 'no touching' >&2; exit 2"
    _, lines, received = run(tmp_path, [bash("touch ran.txt"), EXIT], hook("pre_tool_use", says))
    line, body = result_of(lines, "b1")
    assert (line["ok"], line["kind"]) == (False, "permission")
    assert "no touching" in body["error"]
    assert "see docs/POLICY.md" in body["error"]
    tool_messages = [m for m in received[-1]["messages"] if m["role"] == "tool"]
    assert "see docs/POLICY.md" in str(tool_messages[0]["content"]), "the model reads it too"


def test_a_hooks_question_nobody_can_answer_is_not_a_refusal_by_the_user(tmp_path: Path) -> None:
    ask = (
        """echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", """
        """"permissionDecision": "ask", "permissionDecisionReason": "check with ops"}}'"""
    )
    _, lines, _ = run(tmp_path, [bash("touch ran.txt"), EXIT], hook("pre_tool_use", ask))
    line, body = result_of(lines, "b1")
    assert (line["ok"], line["kind"]) == (False, "needs_approval")
    assert "nobody could be asked (no interactive terminal)" in body["error"]
    assert "check with ops" in body["error"]
    assert "did not approve" not in body["error"]
    assert not (tmp_path / "ws" / "ran.txt").exists()


def test_every_event_runs_in_order_with_claude_payload_fields(tmp_path: Path) -> None:
    log = tmp_path / "events.jsonl"
    record = f"cat >> {log}; echo >> {log}"
    hooks = "".join(
        hook(event, record, matcher="run_bash" if event.endswith("tool_use") else "")
        for event in ("session_start", "user_prompt_submit", "pre_tool_use", "stop", "session_end")
    )
    hooks += hook(
        "post_tool_use", record + "; echo 'lint failed: ran.txt' >&2; exit 2", matcher="run_bash"
    )
    done, lines, received = run(tmp_path, [bash("touch ran.txt"), EXIT], hooks, task="do it")
    assert done.returncode == 0, done.stderr[-2000:]
    seen = [json.loads(x) for x in log.read_text().splitlines() if x.strip()]
    assert [(s["event"], s.get("tool_name", "")) for s in seen] == [
        ("session_start", ""),
        ("user_prompt_submit", ""),
        ("pre_tool_use", "run_bash"),
        ("post_tool_use", "run_bash"),
        ("stop", ""),
        ("session_end", ""),
    ]
    claude = [s["hook_event_name"] for s in seen]
    assert claude == [
        "SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SessionEnd"
    ]  # fmt: skip
    session = {s["session_id"] for s in seen}
    assert len(session) == 1
    assert "" not in session
    assert {s["cwd"] for s in seen} == {str(tmp_path / "ws")}
    transcript = Path(seen[-1]["transcript_path"])
    assert "do it" in transcript.read_text(), "the transcript holds the session's messages"
    assert seen[0]["source"] == "startup"
    assert seen[1]["prompt"] == "do it"
    assert seen[2]["tool_input"]["command"] == "touch ran.txt"
    assert "receipt" in seen[3]["tool_response"]
    assert seen[4]["status"] == "finished"
    assert (tmp_path / "ws" / "ran.txt").exists(), "post_tool_use cannot undo the call"
    tool_messages = [m for m in received[-1]["messages"] if m["role"] == "tool"]
    assert "lint failed: ran.txt" in str(tool_messages[0]["content"]), "the model is told"
    shown = [x for x in lines if x["type"] == "hook"]
    assert {x["event"] for x in shown} == {
        "session_start", "user_prompt_submit", "pre_tool_use", "post_tool_use", "stop",
    }  # fmt: skip
    assert lines[-1]["type"] == "result", "the result line stays the last line of --json"
    post = next(x for x in shown if x["event"] == "post_tool_use")
    assert (post["decision"], post["call_id"]) == ("deny", "b1")


def test_a_prompt_hook_stops_the_run_before_the_model_is_asked(tmp_path: Path) -> None:
    block = "echo 'no secrets in prompts' >&2; exit 2"
    done, lines, received = run(
        tmp_path, [EXIT], hook("UserPromptSubmit", block, matcher=""), task="pw=1"
    )
    assert received == [], "the model was never asked"
    assert done.returncode == 1
    end = next(x for x in lines if x["type"] == "run_end")
    assert end["status"] == "error"
    assert "no secrets in prompts" in end["error"]
