"""`.claude/settings.json` hooks: read and checked whatever the trust, applied only when trusted,
what cannot run said, a typo refused."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.projecttrust import trust_project
from yagent.app import claudehooks
from yagent.app.config import ConfigError, load
from yagent.app.projectkeys import notice


def settings(ws: Path, hooks: Any) -> None:
    (ws / ".claude").mkdir(parents=True, exist_ok=True)
    (ws / ".claude" / "settings.json").write_text(json.dumps({"model": "x", "hooks": hooks}))


def group(command: str, matcher: str = "Bash", **extra: Any) -> list[dict[str, Any]]:
    return [{"matcher": matcher, "hooks": [{"type": "command", "command": command, **extra}]}]


def test_entries_keep_claudes_matcher_timeout_and_style(tmp_path: Path) -> None:
    settings(tmp_path, {"PreToolUse": group("a", timeout=5), "Stop": group("b", matcher="")})
    read = claudehooks.read(tmp_path)
    assert read is not None
    assert [(e["event"], e["matcher"], e["timeout"], e["style"]) for e in read.entries] == [
        ("pre_tool_use", "Bash", 5.0, "claude"),
        ("stop", "", 60.0, "claude"),
    ]
    assert read.skipped == ()


def test_what_yagent_cannot_run_is_listed_not_dropped(tmp_path: Path) -> None:
    prompt = [{"matcher": "", "hooks": [{"type": "prompt", "prompt": "judge"}]}]
    settings(tmp_path, {"Notification": group("n"), "PreToolUse": prompt})
    read = claudehooks.read(tmp_path)
    assert read is not None
    assert read.entries == ()
    assert read.skipped == (
        "Notification hooks (no such event in yagent)",
        "PreToolUse hook of type 'prompt' (only 'command' hooks run)",
    )


@pytest.mark.parametrize(
    ("hooks", "message"),
    [
        ({"PreToolUze": group("x")}, "did you mean 'PreToolUse'"),
        ({"PreToolUse": {"matcher": "Bash"}}, "list of matcher groups"),
        ({"PreToolUse": group("")}, "'command' must be a non-empty string"),
        ({"PreToolUse": group("x", timeout=0)}, "'timeout' must be seconds > 0"),
        ([], "'hooks' must be an object"),
    ],
)
def test_a_file_that_cannot_be_read_as_written_is_refused(
    tmp_path: Path, hooks: Any, message: str
) -> None:
    settings(tmp_path, hooks)
    with pytest.raises(claudehooks.ClaudeHooksError, match=message):
        claudehooks.read(tmp_path)


def test_hooks_apply_only_once_the_file_is_trusted(tmp_path: Path) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    settings(ws, {"PreToolUse": group("exit 2")})
    untrusted = load(home=home, workspace=ws, env={})
    assert untrusted.hooks == []
    line = notice(untrusted.project)
    assert line is not None
    assert ".claude/settings.json (not trusted): hooks" in line
    trust_project(home, ws)
    trusted = load(home=home, workspace=ws, env={})
    assert [(h.event, h.matcher, h.style) for h in trusted.hooks] == [
        ("pre_tool_use", "Bash", "claude")
    ]
    settings(ws, {"PreToolUse": group("exit 0")})  # changed since trusted: withheld again
    changed = load(home=home, workspace=ws, env={})
    assert changed.hooks == []
    assert "changed since you trusted it" in (notice(changed.project) or "")


def test_a_typo_is_refused_trusted_or_not(tmp_path: Path) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    (ws / ".yagent").mkdir(parents=True)
    (ws / ".yagent" / "config.toml").write_text(
        '[[hooks]]\nevent = "post_tool_uze"\ncommand = "x"\n'
    )
    with pytest.raises(ConfigError, match="did you mean 'post_tool_use'"):
        load(home=home, workspace=ws, env={})
    (ws / ".yagent" / "config.toml").unlink()
    settings(ws, {"Stopp": group("x")})
    with pytest.raises(ConfigError, match="did you mean 'Stop'"):
        load(home=home, workspace=ws, env={})
