"""bench/run.py and bench/benchlib.py: a missed or unjudged bound always fails the run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"
sys.path.insert(0, str(BENCH))

import benchlib  # noqa: E402
import run  # noqa: E402


def test_report_computes_the_verdict_and_the_exit_code(capsys: pytest.CaptureFixture[str]) -> None:
    bench = benchlib.Report()
    bench.figure("a", 1.1, "x", bound=1.2)
    bench.figure("b", 90.9, "%", bound=95.0, within="min")
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(f["name"], f["pass"]) for f in lines] == [("a", True), ("b", False)]
    assert bench.exit_code() == 1
    assert benchlib.Report().exit_code() == 0


def test_interleaved_alternates_and_takes_the_median_of_pair_ratios() -> None:
    calls: list[str] = []
    a_costs, b_costs = iter([1.0, 2.0, 4.0]), iter([2.0, 2.0, 40.0])

    def a() -> float:
        calls.append("a")
        return next(a_costs)

    def b() -> float:
        calls.append("b")
        return next(b_costs)

    pairs = benchlib.interleaved(a, b, 3)
    assert calls == ["a", "b", "b", "a", "a", "b"]
    assert pairs.ratio == 2.0  # ratios 2, 1, 10
    assert (pairs.a, pairs.b) == (2.0, 2.0)


def fig(value: float, **extra: object) -> dict[str, object]:
    return {"name": "f", "value": value, "unit": "x", "bound": 1.2, "within": "max", **extra}


def test_summary_fails_a_missed_bound_an_unjudged_bound_and_a_silent_exit() -> None:
    ok, line = run.summary("bench_x", 0, [fig(1.0, **{"pass": True})], "")
    assert ok
    assert line.startswith("PASS bench_x: f=1.0 x (<= 1.2) pass")
    ok, line = run.summary("bench_x", 1, [fig(1.5, **{"pass": False})], "")
    assert not ok
    assert "FAIL" in line
    assert "f=1.5" in line
    ok, line = run.summary("bench_x", 0, [fig(1.5, **{"pass": False})], "")
    assert not ok
    assert "missed a bound but exited 0" in line
    ok, line = run.summary("bench_x", 0, [fig(1.5)], "")
    assert not ok
    assert "NO VERDICT" in line
    ok, line = run.summary("bench_x", 2, [], "Traceback\nBoom")
    assert not ok
    assert "exit 2" in line
    assert "Boom" in line
    ok, line = run.summary("bench_x", 0, [{"name": "g", "value": 1, "unit": "ms"}], "")
    assert ok
    assert "no bound declared" in line


def test_summary_shows_the_bounded_field() -> None:
    f = fig(10.0, ratio=1.4, bounded="ratio", **{"pass": False})
    assert "f.ratio=1.4 (<= 1.2) FAIL" in run.summary("bench_x", 1, [f], "")[1]


def test_a_bench_that_misses_its_bound_fails_the_runner(tmp_path: Path) -> None:
    script = tmp_path / "bench_miss.py"
    script.write_text(
        f"import sys; sys.path.insert(0, {str(BENCH)!r})\n"
        "from benchlib import Report\n"
        "r = Report(); r.figure('m', 2.0, 'x', bound=1.0)\n"
        "sys.exit(r.exit_code())\n"
    )
    proc = subprocess.run(
        [sys.executable, str(BENCH / "run.py")],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
        env={"BENCH_RUN_DIR": str(tmp_path), "PATH": "/usr/bin:/bin"},
    )
    assert proc.returncode == 1
    assert "FAIL bench_miss: m=2.0 x (<= 1.0) FAIL" in proc.stdout
