"""pkgcov: per-package coverage floor from `coverage json` output."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from yagent.kernel.archcheck.cli import main
from yagent.kernel.archcheck.pkgcov import package_of, parse_exemptions, run_pkgcov, tally


def summary(
    lines: int, covered: int, branches: int = 0, covered_branches: int = 0
) -> dict[str, Any]:
    return {
        "summary": {
            "num_statements": lines,
            "covered_lines": covered,
            "num_branches": branches,
            "covered_branches": covered_branches,
            "percent_covered": 0.0,
        }
    }


REPORT: dict[str, Any] = {
    "meta": {"version": "7.6"},
    "files": {
        "src/yagent/__init__.py": summary(2, 2),
        "src/yagent/cli/__init__.py": summary(10, 9),
        "src/yagent/cli/__main__.py": summary(0, 0),
        "/abs/yagent/src/yagent/kernel/__init__.py": summary(1, 1),
        "src/yagent/kernel/judge/invoke.py": summary(80, 60, 20, 15),  # 75 / 100
        "src/yagent/kernel/judge/guardset/__init__.py": summary(10, 5),
        "src/yagent/kernel/judge/guardset/core.py": summary(10, 9, 4, 1),  # (5+9+1) / 24
        "tests/helper.py": summary(5, 0),
    },
}


def write(tmp_path: Path, report: dict[str, Any] = REPORT) -> Path:
    path = tmp_path / "coverage.json"
    path.write_text(json.dumps(report))
    return path


@pytest.mark.parametrize(
    ("path", "package"),
    [
        ("src/yagent/__init__.py", "yagent"),
        ("src/yagent/cli/main.py", "yagent.cli"),
        ("src/yagent/agents/director/plan.py", "yagent.agents"),
        ("src/yagent/kernel/__init__.py", "yagent.kernel"),
        ("src/yagent/kernel/judge/invoke.py", "yagent.kernel.judge.invoke"),
        ("src/yagent/kernel/judge/__init__.py", "yagent.kernel.judge"),
        ("src/yagent/kernel/durable/sideeffect/sqlite.py", "yagent.kernel.durable.sideeffect"),
        ("src/yagent/kernel/ptc/engine.py", "yagent.kernel.ptc"),
        ("src/yagent/kernel/notagroup/inner/x.py", "yagent.kernel.notagroup"),
        ("src/yagent/kernel/archcheck/deps.py", "yagent.kernel.archcheck"),
        ("/home/yagent/src/yagent/kernel/x.py", "yagent.kernel.x"),
        ("C:\\r\\src\\yagent\\tools\\a.py", "yagent.tools"),
        ("tests/kernel/test_x.py", None),
    ],
)
def test_package_grouping(path: str, package: str | None) -> None:
    assert package_of(path) == package


def test_percent_counts_lines_and_branches_like_coverage() -> None:
    tallies, outside = tally(REPORT)
    assert outside == ["tests/helper.py"]
    assert tallies["yagent.kernel.judge.invoke"].percent == 75.0
    assert tallies["yagent.kernel.judge.guardset"].covered == 15
    assert tallies["yagent.kernel.judge.guardset"].total == 24
    assert tallies["yagent.cli"].files == 2
    assert tallies["yagent.cli"].percent == 90.0
    assert tallies["yagent.kernel"].percent == 100.0


def test_package_below_the_floor_fails(tmp_path: Path) -> None:
    status, lines = run_pkgcov(write(tmp_path), 75, [])
    assert status == 1
    assert "pkgcov: yagent.kernel.judge.guardset: 62.50 % < floor 75 %" in lines
    assert not any("invoke" in line and "pkgcov:" in line for line in lines)  # 75 meets 75
    assert "(1 measured files outside the package tree were not judged)" in lines


def test_every_package_meeting_the_floor_passes(tmp_path: Path) -> None:
    status, lines = run_pkgcov(write(tmp_path), 60, [])
    assert status == 0
    assert lines[-1] == "pkgcov: every package meets 60 % (5 packages)"


def test_exempt_package_below_the_floor_passes(tmp_path: Path) -> None:
    status, lines = run_pkgcov(write(tmp_path), 75, ["yagent/kernel/judge/guardset=being split"])
    assert status == 0, lines
    assert any("exempt: being split" in line for line in lines)


def test_exempt_package_meeting_the_floor_fails(tmp_path: Path) -> None:
    status, lines = run_pkgcov(write(tmp_path), 60, ["yagent.kernel.judge.guardset=old"])
    assert status == 1
    assert lines[-1] == (
        "pkgcov: yagent.kernel.judge.guardset: 62.50 % meets the floor 60 %: exemption no longer "
        "needed: remove it"
    )


def test_unknown_exempt_package_fails(tmp_path: Path) -> None:
    status, lines = run_pkgcov(write(tmp_path), 60, ["yagent.kernel.ghost=typo"])
    assert status == 1
    assert lines[-1].startswith("pkgcov: yagent.kernel.ghost: exempted but no such package")


def test_exemption_needs_a_reason() -> None:
    assert parse_exemptions(["yagent.cli="])[1] == [
        "--exempt 'yagent.cli=': expected PKG=reason with a non-empty reason"
    ]
    assert parse_exemptions(["yagent.cli"])[1]


def test_unusable_reports_exit_2(tmp_path: Path) -> None:
    assert run_pkgcov(tmp_path / "missing.json", 75, [])[0] == 2
    assert run_pkgcov(write(tmp_path, {"totals": {}}), 75, [])[0] == 2
    (tmp_path / "bad.json").write_text("{")
    assert run_pkgcov(tmp_path / "bad.json", 75, [])[0] == 2
    assert run_pkgcov(write(tmp_path), 75, ["=x"])[0] == 2


def test_pkgcov_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path)
    assert main(["pkgcov", str(path), "--min", "75"]) == 1
    assert "BELOW FLOOR" in capsys.readouterr().out
    assert (
        main(["pkgcov", str(path), "--min", "75", "--exempt", "yagent.kernel.judge.guardset=x"])
        == 0
    )
    assert main(["pkgcov", str(tmp_path / "nope.json"), "--min", "75"]) == 2
    assert "cannot read coverage report" in capsys.readouterr().err
