"""The command: exit codes, the first ten findings and the count, --report, --today."""

from __future__ import annotations

import runpy
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.kernel.archcheck.support import TODAY, make_repo, policy_dict
from yagent.kernel.archcheck.cli import main

MANY = {f"src/pkg/core/m{i:02d}.py": "import pkg.app.main\n" for i in range(12)}


def test_clean_tree_exits_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    make_repo(tmp_path)
    assert main(["--root", str(tmp_path)]) == 0
    assert capsys.readouterr().out == "archcheck: 0 violations\n"


def test_first_ten_then_count_and_exit_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    make_repo(tmp_path, MANY)
    assert main(["check", "--root", str(tmp_path)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 11
    assert lines[0].startswith("import-boundary: src/pkg/core/m00.py:1: module 'core' imports")
    assert lines[9].startswith("import-boundary: src/pkg/core/m09.py:1:")
    assert lines[-1] == "archcheck: 12 violations (10 shown; --report lists all)"


def test_report_lists_everything(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    policy = policy_dict(
        thresholds={"max_file_lines": 1, "enforce": False},
        exceptions=[
            {
                "rule": "import-boundary",
                "path": "src/pkg/core/m11.py",
                "reason": "r",
                "until": "2999-01-01",
                "removal": "later",
            }
        ],
    )
    make_repo(tmp_path, {**MANY, "src/pkg/app/main.py": "X = 1\nY = 2\n"}, policy)
    assert main(["--root", str(tmp_path), "--report"]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert sum(line.startswith("import-boundary:") for line in lines) == 11
    assert (
        "warning (thresholds.enforce is false): max-file-lines: src/pkg/app/main.py:1:" in lines[11]
    )
    assert lines[12].startswith(
        "excused until 2999-01-01 (r): import-boundary: src/pkg/core/m11.py"
    )
    assert lines[-1] == (
        "archcheck: 11 violations; 1 non-blocking structural warnings, 1 excused by exceptions"
    )


def test_summary_mentions_report_for_hidden_extras(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    make_repo(
        tmp_path,
        {"src/pkg/app/main.py": "X = 1\nY = 2\n"},
        policy_dict(thresholds={"max_file_lines": 1, "enforce": False}),
    )
    assert main(["--root", str(tmp_path)]) == 0
    assert capsys.readouterr().out == (
        "archcheck: 0 violations; 1 non-blocking structural warnings (--report lists them)\n"
    )


def test_policy_error_exits_2_and_names_the_problem(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rule = {"id": "r", "pattern": "x", "paths": ["**"], "message": "m", "match": ["y"]}
    make_repo(tmp_path, policy=policy_dict(rules=[rule], surprise=1))
    assert main(["--root", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "policy error" in err
    assert "surprise: unknown key" in err
    assert "rules[0] (r): match example 'y' is not matched" in err


def test_policy_and_today_options(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    exception = {
        "rule": "import-boundary",
        "path": "src/pkg/core/x.py",
        "reason": "r",
        "until": TODAY.isoformat(),
        "removal": "soon",
    }
    make_repo(tmp_path, {"src/pkg/core/x.py": "import pkg.app\n"})
    other = tmp_path.parent / f"{tmp_path.name}-policy.yaml"
    other.write_text(yaml.safe_dump(policy_dict(exceptions=[exception])))
    args = ["--root", str(tmp_path), "--policy", str(other)]
    assert main([*args, "--today", TODAY.isoformat()]) == 0
    assert main([*args, "--today", "2999-01-01"]) == 1
    out = capsys.readouterr().out
    assert f"{other}:0: exceptions[0]" in out  # a policy outside the root is named by its path


def test_module_entry_point_runs_the_gate(tmp_path: Path) -> None:
    make_repo(tmp_path, {"src/pkg/core/x.py": "import pkg.app\n"})
    done = subprocess.run(
        [sys.executable, "-m", "yagent.kernel.archcheck", "--root", str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 1, done.stderr
    assert "archcheck: 1 violation" in done.stdout


def test_main_module_in_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    make_repo(tmp_path)
    monkeypatch.setattr(sys, "argv", ["archcheck", "--root", str(tmp_path)])
    sys.modules.pop("yagent.kernel.archcheck.__main__", None)
    with pytest.raises(SystemExit) as exited:
        runpy.run_module("yagent.kernel.archcheck", run_name="__main__")
    assert exited.value.code == 0
    assert capsys.readouterr().out == "archcheck: 0 violations\n"


def test_missing_source_root_makes_every_root_stale(tmp_path: Path) -> None:
    make_repo(tmp_path)
    shutil.rmtree(tmp_path / "src")
    assert main(["--root", str(tmp_path)]) == 1
