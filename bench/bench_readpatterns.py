"""Benchmark: what a gitignore-style `[sandbox] deny_read` pattern costs (`tools.readpatterns`).

Figures (one JSON line each; medians of several runs in one process):
- readpattern_denies_us: one `ReadMask.denies` on a path no rule covers, with `**/*.pem` and
  `secrets/**` configured — the price every file tool call and every file `search` visits pays;
  with `ratio_to_plain`, against the same mask with the plain entry `secrets` only; bound:
  `DENIES_BOUND_US`.
- readpattern_walk_ms: `ReadMask.hidden()` with `**/*.pem` on a workspace of `FILES` files in
  `DIRS` folders — the walk the sandbox makes once, when it is set up; bound: `WALK_BOUND_MS`.
Exits 1 when a declared bound is missed.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from benchlib import Report
from yagent.tools.readmask import ReadMask

RUNS = 9
CALLS = 2000
DIRS = 500
FILES = 20_000
DENIES_BOUND_US = 100.0
WALK_BOUND_MS = 1500.0


def _median(action: Callable[[], object], runs: int = RUNS) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _workspace(root: Path) -> Path:
    ws = root / "ws"
    for i in range(DIRS):
        (ws / f"pkg{i % 25}" / f"mod{i}").mkdir(parents=True, exist_ok=True)
    for i in range(FILES):
        (ws / f"pkg{i % 25}" / f"mod{i % DIRS}" / f"f{i}.py").write_text("")
    return ws


def main() -> int:
    report = Report()
    with tempfile.TemporaryDirectory() as tmp:
        ws = _workspace(Path(tmp))
        env = {"HOME": str(Path(tmp) / "home"), "YAGENT_HOME": str(Path(tmp) / "yh")}
        probe = str(ws / "pkg3" / "mod3" / "f3.py")
        patterns = ReadMask(ws, deny=("**/*.pem", "secrets/**"), env=env)
        plain = ReadMask(ws, deny=("secrets",), env=env)

        def calls(mask: ReadMask) -> Callable[[], object]:
            return lambda: [mask.denies(probe) for _ in range(CALLS)]

        with_patterns = _median(calls(patterns)) / CALLS * 1e6
        without = _median(calls(plain)) / CALLS * 1e6
        report.figure(
            "readpattern_denies_us",
            round(with_patterns, 2),
            "us",
            bound=DENIES_BOUND_US,
            ratio_to_plain=round(with_patterns / without, 2),
        )
        walk = _median(patterns.hidden, runs=3) * 1000
        report.figure("readpattern_walk_ms", round(walk, 1), "ms", bound=WALK_BOUND_MS, files=FILES)
    return report.exit_code()


if __name__ == "__main__":
    sys.exit(main())
