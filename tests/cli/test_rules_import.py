"""`yagent rules import` through a real `yagent` process, with a fake HOME (Claude's and Codex's
files) and a temp YAGENT_HOME: what is imported, what is not (and why), where it is written, that
the destination keeps its other content, `--dry-run`, a second import, malformed sources (file and
line, exit 2) and no sources (exit 1). The imported rules loading and holding in a run:
`tests/e2e/test_read_rules.py`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from yagent.app.config import Config

SRC = str(Path(__file__).resolve().parents[2] / "src")

CLAUDE = {
    "permissions": {
        "allow": ["Bash(git status:*)", "Bash(npm run test)", "Read(./docs/**)", "Bash(*)"],
        "ask": ["Bash(git push:*)", "Read(./notes)"],
        "deny": [
            "Bash(curl:*)",
            "Read(./secrets/**)",
            "Read(~/.ssh/**)",
            "Read(//etc/shadow)",
            "Edit(./src/**)",
            "WebFetch(domain:example.com)",
            "mcp__github__create_issue",
            "Bash(git * main)",
        ],
        "defaultMode": "acceptEdits",
    },
    "hooks": {},
}

CODEX = """\
# Codex rules
prefix_rule(
    pattern = ["git", ["push", "fetch"]],
    decision = "prompt",
    justification = "talks to the remote",
    match = ["git push origin main", ["git", "fetch"]],
    not_match = ["git status"],
)
prefix_rule(pattern=["rm", "-rf"], decision="forbidden", justification="never")
host_executable(name="git", paths=["/usr/bin/git"])
"""


def yagent(args: list[str], tmp_path: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("YAGENT_", "CODEX_"))}
    env.update(HOME=str(tmp_path / "user"), YAGENT_HOME=str(tmp_path / "yhome"))
    env["PYTHONPATH"] = os.pathsep.join([SRC, env.get("PYTHONPATH", "")])
    done = subprocess.run(
        [sys.executable, "-m", "yagent.cli", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=60,
    )
    assert "Traceback" not in done.stderr + done.stdout, done.stderr
    return done


def _project(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / ".claude").mkdir(parents=True)
    (ws / ".claude" / "settings.json").write_text(json.dumps(CLAUDE, indent=2))
    local = {"permissions": {"allow": ["Bash(make test *)"]}}
    (ws / ".claude" / "settings.local.json").write_text(json.dumps(local))
    (ws / ".yagent").mkdir()
    (ws / ".yagent" / "config.toml").write_text(
        "# my project settings\n[agent]\nmax_parallel_tools = 3  # keep it low\n"
    )
    (tmp_path / "user").mkdir()
    return ws


def _rules(data: dict[str, object]) -> dict[tuple[str, ...], str]:
    out = {}
    for rule in data["shell"]["rules"]:  # type: ignore[index]
        prefix = rule["prefix"]
        key = tuple(prefix.split()) if isinstance(prefix, str) else tuple(prefix)
        out[key] = rule["verdict"]
    return out


def test_claude_permissions_are_mapped_into_the_project_file(tmp_path: Path) -> None:
    ws = _project(tmp_path)
    done = yagent(["rules", "import", "--from", "claude"], tmp_path, ws)
    assert done.returncode == 0, done.stdout + done.stderr
    text = (ws / ".yagent" / "config.toml").read_text()
    assert "# my project settings" in text  # the rest of the file is kept, comments too
    assert "# keep it low" in text
    data = tomllib.loads(text)
    Config.model_validate(data)  # what was written is a valid yagent config
    assert data["agent"]["max_parallel_tools"] == 3
    assert _rules(data) == {
        ("npm", "run", "test"): "allow",
        ("git", "push"): "prompt",
        ("curl",): "forbidden",
        ("make", "test"): "allow",
    }
    assert data["sandbox"]["deny_read"] == ["secrets/**", "~/.ssh/**", "/etc/shadow"]
    out = done.stdout
    assert "not imported  Bash(git status:*): already one of yagent's built-in rules" in out
    assert (
        "imported      Bash(npm run test) -> [[shell.rules]] allow npm run test (as a prefix" in out
    )
    for entry, why in [
        ("Bash(*)", "no allow-every-command rule"),
        ("Read(./docs/**)", "read the workspace without asking"),
        ("Read(./notes)", "no ask-before-read rules"),
        ("Edit(./src/**)", "no per-path write rules"),
        ("WebFetch(domain:example.com)", "no per-host web_fetch rules"),
        ("mcp__github__create_issue", "no standing MCP tool rules"),
        ("Bash(git * main)", "a wildcard inside a command"),
        ("permissions.defaultMode", "no counterpart"),
    ]:
        assert f"not imported  {entry}: " in out, entry
        line = next(x for x in out.splitlines() if x.startswith(f"not imported  {entry}:"))
        assert why in line, line
    assert "yagent trust" in out  # the project's allow rules wait for trust
    # a second import adds nothing and says so
    again = yagent(["rules", "import", "--from", "claude"], tmp_path, ws)
    assert again.returncode == 0, again.stderr
    assert "already there" in again.stdout
    assert "0 entries written" in again.stdout
    assert (ws / ".yagent" / "config.toml").read_text() == text


def test_dry_run_writes_nothing(tmp_path: Path) -> None:
    ws = _project(tmp_path)
    before = (ws / ".yagent" / "config.toml").read_bytes()
    done = yagent(["rules", "import", "--dry-run", "-C", str(ws)], tmp_path, tmp_path)
    assert done.returncode == 0, done.stderr
    assert "imported      Bash(curl:*) -> [[shell.rules]] forbidden curl" in done.stdout
    assert "dry run: 7 entries would go to" in done.stdout
    assert (ws / ".yagent" / "config.toml").read_bytes() == before


def test_codex_rules_go_to_the_user_file(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    rules = tmp_path / "user" / ".codex" / "rules"
    rules.mkdir(parents=True)
    (rules / "default.rules").write_text(CODEX)
    done = yagent(["rules", "import", "--from", "codex", "--scope", "user"], tmp_path, ws)
    assert done.returncode == 0, done.stdout + done.stderr
    data = tomllib.loads((tmp_path / "yhome" / "config.toml").read_text())
    Config.model_validate(data)
    assert _rules(data) == {
        ("git", "push"): "prompt",
        ("git", "fetch"): "prompt",
        ("rm", "-rf"): "forbidden",
    }
    push = next(r for r in data["shell"]["rules"] if r["prefix"] == ["git", "push"])
    assert push["match"] == ["git push origin main"]
    assert push["not_match"] == ["git status"]
    assert push["justification"] == "talks to the remote"
    assert "not imported  line 10: host_executable(...): not a prefix_rule" in done.stdout
    assert not (ws / ".yagent").exists()


def test_malformed_sources_name_the_file_and_line(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    bad = tmp_path / "bad.rules"
    bad.write_text('prefix_rule(pattern=["ls"], decision="allow")\nprefix_rule(pattern=[1])\n')
    done = yagent(["rules", "import", "--from", str(bad)], tmp_path, ws)
    assert done.returncode == 2
    assert f"{bad}:2: pattern item 1 must be a word" in done.stderr
    broken = tmp_path / "settings.json"
    broken.write_text('{\n  "permissions": {\n    "allow": ["Bash(ls)",]\n  }\n}\n')
    done = yagent(["rules", "import", "--from", str(broken)], tmp_path, ws)
    assert done.returncode == 2
    assert f"{broken}:3: not valid JSON" in done.stderr
    unsafe = tmp_path / "evil.rules"
    unsafe.write_text('prefix_rule(pattern=__import__("os").system("touch pwned"))\n')
    done = yagent(["rules", "import", "--from", str(unsafe)], tmp_path, ws)
    assert done.returncode == 2
    assert f"{unsafe}:1: pattern must be a literal" in done.stderr
    assert not (ws / "pwned").exists()
    assert not (ws / ".yagent").exists()


def test_no_source_exits_1_and_an_unknown_origin_2(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (tmp_path / "user").mkdir()
    done = yagent(["rules", "import"], tmp_path, ws)
    assert done.returncode == 1
    assert "no Claude or Codex rules found in this project" in done.stderr
    done = yagent(["rules", "import", "--from", "cursor"], tmp_path, ws)
    assert done.returncode == 2
    assert "is not claude, codex or an existing file" in done.stderr


def test_the_same_import_in_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The mapping measured by coverage too (the subprocess tests above are not)."""
    from yagent.cli import main

    ws = _project(tmp_path)
    rules = ws / ".codex" / "rules"
    rules.mkdir(parents=True)
    (rules / "team.rules").write_text(CODEX)
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    monkeypatch.setenv("YAGENT_HOME", str(tmp_path / "yhome"))
    monkeypatch.delenv("CODEX_HOME", raising=False)
    monkeypatch.chdir(ws)
    assert main(["rules", "import"]) == 0
    out = capsys.readouterr().out
    data = tomllib.loads((ws / ".yagent" / "config.toml").read_text())
    Config.model_validate(data)
    assert _rules(data)[("rm", "-rf")] == "forbidden"
    assert _rules(data)[("curl",)] == "forbidden"
    assert "not imported  line 10: host_executable(...): not a prefix_rule" in out
    assert main(["rules", "import", "--dry-run"]) == 0
    assert "dry run: 0 entries" in capsys.readouterr().out
