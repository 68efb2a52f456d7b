"""`yagent memory add` / `list`, in-process."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from yagent.cli import main


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    h = tmp_path / "home"
    monkeypatch.setenv("YAGENT_HOME", str(h))
    return h


def test_add_and_list_project_and_global_memories(
    tmp_path: Path, home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    assert main(["memory", "add", "-C", str(ws), "tests run with make check"]) == 0
    assert "(project)" in capsys.readouterr().out
    assert main(["memory", "add", "--global", "-C", str(ws), "prefer small diffs"]) == 0
    assert "(global)" in capsys.readouterr().out
    project = json.loads((ws / ".yagent" / "memory.json").read_text())["memories"]
    assert [m["text"] for m in project] == ["tests run with make check"]
    user = json.loads((home / "memory.json").read_text())["memories"]
    assert [(m["scope"], m["source"]) for m in user] == [("global", "user")]
    assert main(["memory", "list", "-C", str(ws)]) == 0
    out = capsys.readouterr().out
    assert "tests run with make check" in out
    assert "prefer small diffs" in out
    assert project[0]["id"] in out
    assert "project: 1 memory (" in out  # one memory, not "1 memories"
    assert "global: 1 memory (" in out


def test_list_says_when_a_file_is_empty_or_broken(
    tmp_path: Path, home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ws = tmp_path / "ws"
    (ws / ".yagent").mkdir(parents=True)
    (ws / ".yagent" / "memory.json").write_text("{broken")
    assert main(["memory", "list", "-C", str(ws)]) == 0
    out = capsys.readouterr().out
    assert "not valid JSON" in out
    assert "global: no memories" in out
    assert main(["memory", "add", "-C", str(ws), "x"]) == 2
    assert main(["memory", "add", "-C", str(ws), "  "]) == 2
