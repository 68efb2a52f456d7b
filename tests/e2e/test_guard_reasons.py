"""Every guard's reason at once: when several rings of the judgement chain refuse one call, the
tool result the model reads names each of them (kernel.judge.guardset's merged denial), through the
`yagent` command with a recorded model side and everything else real."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from yagent.cli import main
from yagent.llm.replay import Recording
from yagent.llm.scripted import call


def run(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    target: Path,
    preset: str,
) -> dict[str, object]:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text(f'[agent]\npreset = "{preset}"\n')
    ws = tmp_path / "ws"
    ws.mkdir()
    monkeypatch.setenv("YAGENT_HOME", str(home))
    for name in ("YAGENT_PROVIDER", "YAGENT_MODEL", "YAGENT_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    rec = Recording()
    args = {"path": str(target), "content": "x\n"}
    rec.add("coding", call("write_file", json.dumps(args), call_id="w1"))
    rec.add("coding", call("agent_exit", json.dumps({"reason": "done"}), call_id="w9"))
    path = tmp_path / "rec.json"
    rec.save(path)
    status = main(["run", "--json", "-y", "-C", str(ws), "--replay", str(path), "write it"])
    assert status == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines() if x.strip()]
    results = {line["call_id"]: line for line in lines if line["type"] == "tool_result"}
    return results["w1"]


def test_two_refusing_guards_are_both_named_in_the_result(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # read-only preset: the command-policy ring refuses every write; the target lies in the
    # yagent home, which the sandbox hides: the boundary ring refuses it too.
    target = tmp_path / "home" / "planted.txt"
    result = run(tmp_path, monkeypatch, capsys, target, "read-only")
    assert not result["ok"]
    body = json.loads(str(result["content"]))
    error = body["error"]
    assert "2 guards denied this call" in error
    assert "command_policy" in error
    assert "workspace_boundary" in error
    assert "read-only" in error  # the preset's reason
    assert "planted.txt" in error  # the hidden path's reason
    assert not target.exists()


def test_one_refusing_guard_keeps_its_own_stage_and_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "home" / "planted.txt"
    result = run(tmp_path, monkeypatch, capsys, target, "workspace-write")
    body = json.loads(str(result["content"]))
    assert not result["ok"]
    assert body["stage"] == "workspace_boundary"
    assert "guards denied" not in body["error"]
    assert not target.exists()
