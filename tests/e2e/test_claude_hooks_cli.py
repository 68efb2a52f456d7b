"""Claude Code's hooks in a repository, through the real `yagent` command (issue 16).

A workspace ships `.claude/settings.json` with hooks. Untrusted, they do not run and a notice says
so (and names the Claude events yagent has no counterpart for); after `yagent trust --yes` they
run with Claude's payload (`hook_event_name`, `tool_name: "Bash"`…), Claude's tool names in
matchers (regular expressions), exit 2 blocking, exit 1 non-blocking, and `permissionDecision`
honoured — where "allow" lifts neither a forbidden command nor a protected path's question.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.e2e.test_hooks_cli import EXIT, bash, result_of, run, yagent
from yagent.llm.scripted import call

# Bash: a `touch` is blocked (exit 2, stderr); anything else gets Claude's explicit "allow".
GATE = (
    "python3 -c 'import json,sys; d=json.load(sys.stdin); "
    'open(sys.argv[1], "a").write(json.dumps(d) + "\\n"); c=d["tool_input"]["command"]; '
    'sys.stderr.write("blocked by the claude hook") if "touch" in c else '
    'print(json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse", '
    '"permissionDecision": "allow"}})); sys.exit(2 if "touch" in c else 0)\' LOG'
)
ALLOW = (
    """echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", """
    """"permissionDecision": "allow"}}'"""
)


def settings(log: Path) -> dict[str, Any]:
    def handler(command: str) -> dict[str, Any]:
        return {"type": "command", "command": command}

    return {
        "permissions": {"allow": ["Bash(git status:*)"]},
        "hooks": {
            "PreToolUse": [
                {"matcher": "Bash", "hooks": [handler(GATE.replace("LOG", str(log)))]},
                {"matcher": "Write|Edit", "hooks": [handler(ALLOW)]},
            ],
            "PostToolUse": [
                {"matcher": "Write", "hooks": [handler("echo 'formatter missing' >&2; exit 1")]}
            ],
            "Notification": [{"hooks": [handler("true")]}],
        },
    }


def write(path: str, call_id: str) -> Any:
    return call("write_file", json.dumps({"path": path, "content": "x = 1\n"}), call_id=call_id)


def test_claude_hooks_wait_for_trust_then_run_with_claudes_conventions(tmp_path: Path) -> None:
    ws, log = tmp_path / "ws", tmp_path / "pre.jsonl"
    (ws / ".claude").mkdir(parents=True)
    (ws / ".claude" / "settings.json").write_text(json.dumps(settings(log)))

    done, lines, _ = run(tmp_path, [bash("touch untrusted.txt"), EXIT], "")
    assert done.returncode == 0, done.stderr[-2000:]
    assert (ws / "untrusted.txt").exists(), "untrusted hooks do not run"
    assert not log.exists()
    notices = [x["text"] for x in lines if x["type"] == "notice"]
    assert any(".claude/settings.json (not trusted): hooks" in n for n in notices), notices
    assert any("not run by yagent: Notification hooks" in n for n in notices), notices

    trusted = yagent(tmp_path, ["trust", "--yes", "-C", str(ws)])
    assert trusted.returncode == 0, trusted.stderr
    assert "blocked by the claude hook" in trusted.stdout, "the review shows the commands"

    turns = [
        bash("touch blocked.txt", "b1"),
        write("notes.py", "w1"),
        write(".yagent/config.toml", "w2"),
        bash("rm -rf /", "b2"),
        EXIT,
    ]
    done, lines, _ = run(tmp_path, turns, "")
    assert done.returncode == 0, done.stderr[-2000:]
    line, body = result_of(lines, "b1")
    assert (line["ok"], line["kind"]) == (False, "permission")
    assert "blocked by the claude hook" in body["error"]
    assert not (ws / "blocked.txt").exists()
    seen = [json.loads(x) for x in log.read_text().splitlines()]
    first = seen[0]
    assert first["hook_event_name"] == "PreToolUse"
    assert (first["tool_name"], first["yagent_tool_name"]) == ("Bash", "run_bash")
    assert first["tool_input"]["command"] == "touch blocked.txt"
    assert first["cwd"] == str(ws)
    assert first["session_id"]
    assert Path(first["transcript_path"]).is_file()
    # exit 1 from a Claude hook is a non-blocking error: the write stands, the notice is shown
    assert result_of(lines, "w1")[0]["ok"]
    assert (ws / "notes.py").read_text() == "x = 1\n"
    post = next(x for x in lines if x["type"] == "hook" and x["event"] == "post_tool_use")
    assert post["decision"] == "allow"
    assert "non-blocking error" in post["reason"]
    assert "formatter missing" in post["reason"]
    # "allow" is no objection: a protected path's question and a forbidden command stand
    line, body = result_of(lines, "w2")
    assert (line["ok"], line["kind"]) == (False, "needs_approval")
    assert "protected path" in body["error"]
    assert not (ws / ".yagent" / "config.toml").exists()
    line, body = result_of(lines, "b2")
    assert not line["ok"]
    assert body["stage"] == "command_policy"
    assert "forbidden" in body["error"]
