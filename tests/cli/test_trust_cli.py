"""`yagent trust`, the withheld-keys notice of a run, and doctor's trust row."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from yagent.app import trust
from yagent.app.config import load
from yagent.cli import doctor, main
from yagent.cli import trust as trust_cli
from yagent.cli.demo import TASK, prepare

DEMO = Path(__file__).resolve().parents[2] / "demo"
PROJECT = """
[agent]
preset = "yolo"
[mcp.helper]
command = "/bin/sh"
env = { TOKEN = "s3cr3t-value" }
"""


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / ".yagent").mkdir(parents=True)
    (root / ".yagent" / "config.toml").write_text(PROJECT)
    return root


def preset(home: Path, ws: Path) -> str:
    return load(home=home, workspace=ws, env={}).agent.preset


def test_show_lists_withheld_keys_with_values_and_masks_secrets(
    home: Path, ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["trust", "--show", "-C", str(ws)]) == 0
    out = capsys.readouterr().out
    assert ".yagent/config.toml: not trusted" in out
    assert 'agent.preset = "yolo"' in out
    assert '"command": "/bin/sh"' in out
    assert "s3cr3t-value" not in out
    assert '"TOKEN": "***"' in out
    assert preset(home, ws) == "workspace-write", "--show trusts nothing"


def test_without_a_terminal_trust_needs_yes(
    home: Path, ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["trust", "-C", str(ws)]) == 2
    assert "--yes" in capsys.readouterr().err
    assert preset(home, ws) == "workspace-write"
    assert main(["trust", "--yes", "-C", str(ws)]) == 0
    assert "trusted .yagent/config.toml" in capsys.readouterr().out
    assert preset(home, ws) == "yolo"
    assert main(["trust", "--yes", "-C", str(ws)]) == 0
    assert ".yagent/config.toml: trusted" in capsys.readouterr().out
    assert main(["trust", "--revoke", "-C", str(ws)]) == 0
    assert "trust revoked" in capsys.readouterr().out
    assert preset(home, ws) == "workspace-write"
    assert main(["trust", "--revoke", "-C", str(ws)]) == 0
    assert "was not trusted" in capsys.readouterr().out


@pytest.mark.parametrize(("answer", "status", "expected"), [("y\n", 0, "yolo"), ("n\n", 1, None)])
def test_on_a_terminal_it_asks(
    home: Path,
    ws: Path,
    monkeypatch: pytest.MonkeyPatch,
    answer: str,
    status: int,
    expected: str | None,
) -> None:
    monkeypatch.setattr(trust_cli, "_interactive", lambda: True)
    monkeypatch.setattr("sys.stdin", __import__("io").StringIO(answer))
    assert main(["trust", "-C", str(ws)]) == status
    assert preset(home, ws) == (expected or "workspace-write")


def test_what_is_trusted_is_the_content_that_was_shown(
    home: Path, ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def edit_while_asking() -> bool:
        (ws / ".yagent" / "config.toml").write_text(PROJECT + "[[hooks]]\ncommand = 'x'\n")
        return True

    monkeypatch.setattr(trust_cli, "_interactive", edit_while_asking)
    monkeypatch.setattr("sys.stdin", __import__("io").StringIO("y\n"))
    assert main(["trust", "-C", str(ws)]) == 0
    config = load(home=home, workspace=ws, env={})
    assert {w.reason for w in config.project.withheld} == {trust.Status.CHANGED}
    assert config.hooks == []


def test_nothing_to_trust_and_an_unreadable_trust_file(
    home: Path, tmp_path: Path, ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bare = tmp_path / "bare"
    bare.mkdir()
    assert main(["trust", "--yes", "-C", str(bare)]) == 0
    assert "nothing to trust" in capsys.readouterr().out
    home.mkdir()
    (home / "trust.json").write_text("{nope")
    assert main(["trust", "--yes", "-C", str(ws)]) == 2
    assert "trust.json" in capsys.readouterr().err
    assert main(["trust", "--revoke", "-C", str(ws)]) == 2
    assert "trust.json" in capsys.readouterr().err
    assert (home / "trust.json").read_text() == "{nope"


def test_a_run_says_what_was_withheld_in_json_mode(
    tmp_path: Path, home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(Path(sys.executable).parent) + os.pathsep + os.environ["PATH"])
    workspace = prepare(DEMO / "project", tmp_path)
    (workspace / ".yagent").mkdir()
    (workspace / ".yagent" / "config.toml").write_text('[agent]\npreset = "yolo"\n')
    argv = ["run", "--json", "-y", "-C", str(workspace), "--replay", str(DEMO / "recording.json")]
    assert main([*argv, TASK]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.strip()]
    notices = [line["text"] for line in lines if line["type"] == "notice"]
    assert len(notices) == 1
    assert "agent.preset" in notices[0]
    assert "`yagent trust`" in notices[0]


def test_doctor_shows_the_trust_state(home: Path, ws: Path, tmp_path: Path) -> None:
    name, ok, detail, required = doctor._trust(load(home=home, workspace=ws, env={}))
    assert (name, ok, required) == ("project trust", False, False)
    assert ".yagent/config.toml: not trusted" in detail
    assert "agent.preset" in detail
    assert main(["trust", "--yes", "-C", str(ws)]) == 0
    _, ok, detail, _ = doctor._trust(load(home=home, workspace=ws, env={}))
    assert (ok, detail) == (True, ".yagent/config.toml: trusted")
    bare = tmp_path / "bare"
    bare.mkdir()
    _, ok, detail, _ = doctor._trust(load(home=home, workspace=bare, env={}))
    assert ok
    assert "no project files" in detail


def test_doctor_prints_the_trust_row(
    home: Path, ws: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from yagent.app import engines

    monkeypatch.setattr(engines, "OLLAMA_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("COLUMNS", "400")
    monkeypatch.chdir(ws)
    main(["doctor"])
    out = capsys.readouterr().out
    assert "project trust" in out
    assert "agent.preset" in out
