"""The cost of acting on the judged path through descriptors (issue 13, item 1).

`write_file` and `read_file` as they run now — the judged resolution opened beneath the workspace
descriptor with no link followed (`kernel.confine.beneath`: one `openat2`, or the portable walk),
the atomic write's temporary file and rename inside the directory's descriptor — against today's
path before the change: the same resolution used as a path string (`Path.stat`, `open(path)`,
`mkdir(parents=True)`, `tempfile.mkstemp` + `os.replace`). Both sides resolve the path once with
the guard and share the page reading, so the ratio is the price of the descriptors alone.

A 1 KiB file three directories below a real workspace in a temp dir. New and old calls alternate
one by one in this one process (the machine is shared and noisy: drift hits both sides alike);
each figure is the median per-call time of CALLS calls per side, after a warm-up. Prints one
JSON line per figure (both walks: `openat2` and the portable fallback) and exits 1 when a ratio
is over BOUND.
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from yagent.kernel.confine import beneath
from yagent.tools.atomicfile import atomic_write
from yagent.tools.files import common, read, write
from yagent.tools.files.judged import Judged
from yagent.tools.guard import WorkspaceGuard
from yagent.toolspec.params import ReadFileArgs

CALLS = {"write_file": 400, "read_file": 3000}
WARMUP = 200
BOUND = 1.2
REL = "src/pkg/mod/data.txt"
DATA = (b"x" * 63 + b"\n") * 16


def old_write(guard: WorkspaceGuard, path: str) -> None:
    resolved = Path(guard.resolve(path))
    if resolved.is_dir():
        raise RuntimeError("a directory")
    resolved.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(resolved, DATA)


def new_write(guard: WorkspaceGuard, path: str) -> None:
    target = Judged.of(guard.workspace, guard.resolve(path))
    write._write_sync(target, path, path, DATA)


def old_read(guard: WorkspaceGuard, path: str) -> None:
    resolved = Path(guard.resolve(path))
    st = common.check_regular_file(resolved.stat(), path)
    with resolved.open("rb") as f:
        read._read_open(f, st, ReadFileArgs(path=path), path)


def new_read(guard: WorkspaceGuard, path: str) -> None:
    target = Judged.of(guard.workspace, guard.resolve(path))
    read._read_sync(target, ReadFileArgs(path=path), path)


def timed(fn: Callable[[WorkspaceGuard, str], None], guard: WorkspaceGuard) -> float:
    start = time.perf_counter()
    fn(guard, REL)
    return time.perf_counter() - start


def compare(
    name: str,
    new: Callable[[WorkspaceGuard, str], None],
    old: Callable[[WorkspaceGuard, str], None],
    guard: WorkspaceGuard,
) -> float:
    for _ in range(WARMUP):  # caches, the first openat2 probe
        timed(new, guard)
        timed(old, guard)
    news, olds = [], []
    for _ in range(CALLS[name]):
        news.append(timed(new, guard))
        olds.append(timed(old, guard))
    n, o = statistics.median(news), statistics.median(olds)
    ratio = n / o
    walk = "openat2" if beneath.USE_OPENAT2 else "portable-walk"
    fig = {
        "name": f"tools.fdwalk.{name}.{walk}",
        "value": round(n * 1e6, 2),
        "unit": "us/call",
        "today_us": round(o * 1e6, 2),
        "ratio_to_today": round(ratio, 3),
        "bound": BOUND,
        "within": "max",
        "bounded": "ratio_to_today",
        "pass": ratio <= BOUND,
        "calls": CALLS[name],
    }
    print(json.dumps(fig), flush=True)
    return ratio


def main() -> int:
    over = []
    with tempfile.TemporaryDirectory(prefix="yagent-bench-") as tmp:
        guard = WorkspaceGuard(Path(tmp))
        (Path(tmp) / REL).parent.mkdir(parents=True)
        (Path(tmp) / REL).write_bytes(DATA)
        for use_openat2 in (True, False):
            beneath.USE_OPENAT2 = use_openat2
            for name, new, old in (
                ("write_file", new_write, old_write),
                ("read_file", new_read, old_read),
            ):
                if compare(name, new, old, guard) > BOUND:
                    over.append(name)
    if over:
        print(f"over the {BOUND}x bound: {over}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
