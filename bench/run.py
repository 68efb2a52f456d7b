"""Runs every `bench/bench_*.py` in its own process, relays their JSON lines, then summarises.

Each benchmark prints one JSON object per figure (name, value, unit, and where there is a peer or a
bound, the ratio measured in the same run). A figure with a declared `bound` also carries `within`
(`max` / `min`) and its verdict `pass` (see `bench/benchlib.py`). After the JSON lines this runner
prints one summary line per benchmark: its bounded figures with value, bound and PASS/FAIL (or
"no bound" when it declares none), then exits 1 when any benchmark failed. A benchmark fails when
it exits non-zero, when a bounded figure missed its bound, when a bound carries no verdict, or
when it printed a missed bound yet exited 0 — a missed bound or a missing figure is never silent.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def figures(stdout: str) -> list[dict[str, Any]]:
    out = []
    for raw in stdout.splitlines():
        try:
            line = json.loads(raw)
        except ValueError:
            continue
        if isinstance(line, dict) and "name" in line:
            out.append(line)
    return out


def _show(f: dict[str, Any], mark: str) -> str:
    sign = "<=" if f.get("within", "max") == "max" else ">="
    field = f.get("bounded", "value")  # a figure may bound another field than its value
    unit = "" if field != "value" else f" {f.get('unit', '')}"
    shown = f"{f['name']}" + (f".{field}" if field != "value" else "")
    return f"{shown}={f.get(field)}{unit} ({sign} {f['bound']}) {mark}"


def summary(stem: str, rc: int, lines: list[dict[str, Any]], stderr: str) -> tuple[bool, str]:
    """The verdict on one benchmark and its one-line summary.

    The line names every missed (or unjudged) bound; when all are met it shows the first two
    bounded figures and how many more were met.
    """
    bounded = [f for f in lines if "bound" in f]
    unjudged = [f for f in bounded if not isinstance(f.get("pass"), bool)]
    missed = [f for f in bounded if f.get("pass") is False]
    met = [f for f in bounded if f.get("pass") is True]
    ok = rc == 0 and not missed and not unjudged
    parts = [_show(f, "FAIL") for f in missed] + [_show(f, "NO VERDICT") for f in unjudged]
    if not parts:
        parts = [_show(f, "pass") for f in met[:2]]
        if len(met) > 2:
            parts.append(f"+{len(met) - 2} more bounds met")
    if rc == 0 and missed:
        parts.append("missed a bound but exited 0")
    if rc != 0 and not missed:
        tail = " | ".join(stderr.strip().splitlines()[-3:])
        parts.append(f"exit {rc}: {tail}" if tail else f"exit {rc}")
    if not parts:
        parts.append(f"{len(lines)} figures, no bound declared")
    return ok, f"{'PASS' if ok else 'FAIL'} {stem}: " + "; ".join(parts)


def main(argv: list[str]) -> int:
    wanted = set(argv)
    failed = 0
    lines_out: list[str] = []
    # BENCH_RUN_DIR: another directory of benchmarks (the runner's own tests use it).
    where = Path(os.environ.get("BENCH_RUN_DIR") or HERE)
    for path in sorted(where.glob("bench_*.py")):
        if wanted and path.stem not in wanted and path.stem.removeprefix("bench_") not in wanted:
            continue
        proc = subprocess.run(
            [sys.executable, str(path)], capture_output=True, text=True, check=False
        )
        sys.stdout.write(proc.stdout)
        sys.stdout.flush()
        ok, line = summary(path.stem, proc.returncode, figures(proc.stdout), proc.stderr)
        if not ok:
            failed += 1
            tail = proc.stderr.strip().splitlines()[-5:]
            print(json.dumps({"name": path.stem, "error": " | ".join(tail) or line}))
        lines_out.append(line)
    print("\nsummary (figure, bound, verdict):")
    for line in lines_out:
        print(line)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
