"""Runs every `bench/bench_*.py` in its own process and relays their JSON lines.

Each benchmark prints one JSON object per figure (name, value, unit, and where there is a peer or a
bound, the ratio measured in the same run). A benchmark that fails is reported as a JSON line with
`"error"` and makes this runner exit 1 — a missing figure is never silent.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(argv: list[str]) -> int:
    wanted = set(argv)
    failed = 0
    for path in sorted(HERE.glob("bench_*.py")):
        if wanted and path.stem not in wanted and path.stem.removeprefix("bench_") not in wanted:
            continue
        proc = subprocess.run(
            [sys.executable, str(path)], capture_output=True, text=True, check=False
        )
        sys.stdout.write(proc.stdout)
        if proc.returncode != 0:
            failed += 1
            tail = proc.stderr.strip().splitlines()[-5:]
            print(json.dumps({"name": path.stem, "error": " | ".join(tail)}))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
