"""`yagent fanout PLAN.toml`: in-process, replayed model side, real tools, real bwrap."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.projecttrust import trust_project
from yagent.cli import main
from yagent.llm.replay import Recording
from yagent.llm.scripted import call
from yagent.memory import SessionStore

PLAN = """
[[task]]
name = "docs"
agent = "coding"
task = "Update docs/usage.md"
write = ["docs"]
read = ["src", "README.md"]

[[task]]
name = "code"
capabilities = ["write", "exec"]
task = "Add src/new.py"
write = ["src"]
"""


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    for d in (".git", "docs", "src"):
        (root / d).mkdir(parents=True)
    (root / "README.md").write_text("# project\n")
    return root


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def recording(tmp_path: Path, *, code_steps: int = 2) -> str:
    rec = Recording()
    done = json.dumps({"reason": "done", "summary": "docs done"})
    rec.add("docs", call("write_file", json.dumps({"path": "docs/usage.md", "content": "u\n"})))
    rec.add("docs", call("run_bash", json.dumps({"command": "echo x > src/sneak.txt"})))
    rec.add("docs", call("agent_exit", done, call_id="docs-exit"))
    steps = [
        call("run_bash", json.dumps({"command": "echo 'print(1)' > src/new.py"})),
        call("agent_exit", json.dumps({"reason": "done", "summary": "code done"})),
    ]
    for step in steps[:code_steps]:
        rec.add("code", step)
    path = tmp_path / "rec.json"
    rec.save(path)
    return str(path)


def lines_of(out: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def sessions(home: Path) -> list[object]:
    with SessionStore(home / "sessions.db") as store:
        return list(store.list_sessions(limit=None))


def test_a_plan_runs_confined_and_prints_receipts(
    tmp_path: Path, home: Path, ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plan = write(tmp_path, "plan.toml", PLAN)
    args = ["fanout", plan, "-C", str(ws), "--json", "-y", "--replay", recording(tmp_path)]
    status = main(args)
    lines = lines_of(capsys.readouterr().out)
    assert status == 0
    receipts = [line for line in lines if line["type"] == "receipt"]
    assert [(r["name"], r["status"], r["agent"]) for r in receipts] == [
        ("docs", "completed", "coding"),
        ("code", "completed", "coding"),
    ]
    assert receipts[0]["output"] == "docs done"
    assert lines[-2]["type"] == "fanout"
    assert lines[-2]["ok"] is True
    assert lines[-1]["type"] == "replay"
    assert {line["delegation_id"] for line in lines if line["type"] == "delegation_start"} == {
        r["delegation_id"] for r in receipts
    }
    assert (ws / "docs" / "usage.md").read_text() == "u\n"
    assert (ws / "src" / "new.py").read_text() == "print(1)\n"
    assert not (ws / "src" / "sneak.txt").exists()  # docs' shell cannot write src
    results = [line for line in lines if line["type"] == "tool_result"]
    assert any("Read-only file system" in str(r["content"]) for r in results)
    assert len(sessions(home)) == 1


def test_a_task_that_does_not_finish_exits_1_with_a_summary(
    tmp_path: Path, home: Path, ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plan = write(tmp_path, "plan.toml", PLAN)
    rec = recording(tmp_path, code_steps=1)  # code's recording ends before it finishes
    status = main(["fanout", plan, "-C", str(ws), "-y", "--replay", rec, "--max-parallel", "1"])
    out = capsys.readouterr().out
    assert status == 1
    assert "✓ docs (coding" in out
    assert "✗ code (coding" in out
    assert "went past the recording" in out
    assert "1 of 2 tasks completed" in out


@pytest.mark.parametrize(
    ("text", "says"),
    [
        (PLAN.replace('write = ["src"]', 'write = ["docs/api"]'), "'code' writes 'docs/api'"),
        (PLAN.replace('read = ["src", "README.md"]', 'read = ["docs"]'), "read-only"),
        (PLAN.replace('agent = "coding"', 'agent = "wizard"'), "wizard"),
        (PLAN.replace('"write", "exec"', '"write", "teleport"'), "teleport"),
        (PLAN.replace('name = "code"', 'name = "code"\ncolour = "red"'), "invalid plan"),
        ("[[task]\n", "cannot read the plan"),
        ("", "invalid plan"),
    ],
)
def test_a_plan_that_does_not_hold_exits_2_before_any_session(
    tmp_path: Path,
    home: Path,
    ws: Path,
    capsys: pytest.CaptureFixture[str],
    text: str,
    says: str,
) -> None:
    plan = write(tmp_path, "plan.toml", text)
    status = main(["fanout", plan, "-C", str(ws), "--json", "-y", "--replay", recording(tmp_path)])
    captured = capsys.readouterr()
    assert status == 2
    assert says in captured.err
    assert captured.out == ""
    assert not (home / "sessions.db").exists() or sessions(home) == []


def test_a_preset_that_runs_commands_on_the_host_is_refused(
    tmp_path: Path, home: Path, ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (ws / ".yagent").mkdir()
    (ws / ".yagent" / "config.toml").write_text('[agent]\npreset = "yolo"\n')
    trust_project(home, ws)  # a looser preset from the repository needs trust
    plan = write(tmp_path, "plan.toml", PLAN)
    assert main(["fanout", plan, "-C", str(ws), "--replay", recording(tmp_path)]) == 2
    assert "preset 'yolo' runs shell commands on the host" in capsys.readouterr().err
    assert sessions(home) == []


def test_check_runs_every_check_and_nothing_else(
    tmp_path: Path,
    home: Path,
    ws: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from yagent.app import engines

    monkeypatch.setattr(engines, "OLLAMA_URL", "http://127.0.0.1:9")  # no model anywhere
    plan = write(tmp_path, "plan.toml", PLAN.replace('write = ["docs"]', 'write = ["docs/new"]'))
    assert main(["fanout", plan, "-C", str(ws), "--check", "--json"]) == 0
    [line] = [json.loads(x) for x in capsys.readouterr().out.splitlines() if x.strip()]
    assert line["type"] == "plan"
    assert [(t["name"], t["agent"]) for t in line["tasks"]] == [
        ("docs", "coding"),
        ("code", "coding"),
    ]
    assert line["created"] == ["docs/new"]
    assert not (ws / "docs" / "new").exists()  # a check creates nothing
    assert sessions(home) == []
    assert main(["fanout", plan, "-C", str(ws), "--check"]) == 0
    out = capsys.readouterr().out
    assert "plan holds: 2 task(s)" in out
    assert "would create: docs/new" in out
    clash = write(tmp_path, "clash.toml", PLAN.replace('write = ["docs"]', 'write = ["src/x"]'))
    assert main(["fanout", clash, "-C", str(ws), "--check"]) == 2
    assert "cannot be both" in capsys.readouterr().err  # refused with no model configured
