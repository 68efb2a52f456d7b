"""Benchmark: what hiding secrets and protecting nested repositories costs.

Figures (one JSON line each; medians of several runs in one process, ratios measured side by side):
- sandbox_start_masked_ms: building the argv and running `true` in the bubblewrap sandbox as the
  command gate builds it (yagent's home, credential stores and other homes hidden; every nested
  `.git`/`.yagent` found by the walk and bound read-only) in a workspace of `DIRS` directories
  holding `NESTED` nested repositories — with `ratio_to_bare`, against the same sandbox without
  hidden paths or the walk, and `added_ms`; bound: `START_ADDED_MS` added (the walk is per
  command and grows with the workspace's directories, so the bound is on the added time);
- sandbox_walk_ms: the walk alone on that workspace (`mounts.find_named`);
- file_read_file_us / file_write_file_us: one `read_file` / `write_file` call through the real
  adapter and judgement ring (under -y) — with `ratio_to_before`, against the same call with a
  guard that skips the read-mask refusal and tests protected paths at the root only, as before;
  bound: `GUARD_BOUND` (the file tools' target).
Exits 1 when a declared bound is missed.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import anyio

from yagent.kernel.confine import sandbox
from yagent.kernel.confine.sandbox import Program, mounts
from yagent.tools import guard as guard_module
from yagent.tools import registry
from yagent.tools.adapter import Adapter, ToolContext
from yagent.tools.commands import PROTECTED, SHALLOW, masked_tool_paths
from yagent.tools.guard import WorkspaceGuard
from yagent.tools.readmask import ReadMask
from yagent.tools.surface import Surface, SurfaceOptions
from yagent.tools.yolo import Yolo
from yagent.toolspec.builtin import BUILTIN
from yagent.toolspec.profiles import profile

RUNS = 15
DIRS = 2000
NESTED = 20
START_ADDED_MS = 60.0
GUARD_BOUND = 1.2
CALLS = 300
REPEATS = 11


def _median_ms(action: Callable[[], object], runs: int = RUNS) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        action()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def _workspace(root: Path) -> Path:
    ws = root / "ws"
    for i in range(DIRS):
        (ws / f"pkg{i % 50}" / f"mod{i}").mkdir(parents=True, exist_ok=True)
    for i in range(NESTED):
        (ws / f"pkg{i}" / f"mod{i}" / ".git" / "hooks").mkdir(parents=True)
    (ws / ".git").mkdir()
    (ws / "a.txt").write_text("a\n")
    return ws


def _run(provider: sandbox.BwrapProvider) -> None:
    subprocess.run(provider.wrap(["true"]), check=True, env={"PATH": "/usr/bin:/bin"})


def _sandboxes(ws: Path) -> dict[str, object]:
    reads = ReadMask(ws)
    hidden = reads.hidden()
    masked = sandbox.BwrapProvider(
        ws,
        protected=PROTECTED,
        protected_names=PROTECTED,
        shallow=SHALLOW,
        hidden=hidden,
        readable=masked_tool_paths(hidden=hidden),
    )
    bare = sandbox.BwrapProvider(ws, protected=PROTECTED, readable=masked_tool_paths())
    _run(masked)
    _run(bare)  # warm both
    masked_runs, bare_runs = [], []
    for _ in range(RUNS):  # interleaved: the machine's load falls on both alike
        masked_runs.append(_median_ms(lambda: _run(masked), 1))
        bare_runs.append(_median_ms(lambda: _run(bare), 1))
    masked_ms, bare_ms = statistics.median(masked_runs), statistics.median(bare_runs)
    walk_ms = _median_ms(lambda: mounts.find_named(ws, PROTECTED, shallow=SHALLOW))
    argv = masked.command(Program(["true"]))
    return {
        "start": (masked_ms, bare_ms),
        "walk": walk_ms,
        "mounts": argv.count("--ro-bind") + argv.count("--tmpfs"),
    }


class _Before(WorkspaceGuard):
    """The guard as it judged before: no read-mask refusal, root-only protected paths."""

    def unreadable(self, spec: object, args: object) -> str | None:  # type: ignore[override]
        return None

    def _is_protected(self, resolved: str) -> bool:
        roots = [os.path.join(self.workspace, rel) for rel in guard_module.PROTECTED_PATHS]
        return any(guard_module._under(resolved, r) for r in roots)


def _adapter(ws: Path, guard: WorkspaceGuard) -> Adapter:
    surface = Surface(BUILTIN, profile("coding"), guard, options=SurfaceOptions(yolo=Yolo.YOLO))
    return Adapter(ToolContext(ws, surface, state_dir=ws.parent / "state"), registry.executors())


def _per_call_us(
    adapters: tuple[Adapter, Adapter], tool: str, args: dict[str, str]
) -> tuple[float, float]:
    """Median microseconds per call for each adapter, measured interleaved (the machine's load
    falls on both alike)."""
    payload = json.dumps(args)

    def batch(adapter: Adapter) -> Callable[[], None]:
        async def calls() -> None:
            for _ in range(CALLS):
                result = await adapter.call(tool, payload)
                assert result.ok, result.content

        return lambda: anyio.run(calls)

    now: list[float] = []
    before: list[float] = []
    for _ in range(REPEATS):
        now.append(_median_ms(batch(adapters[0]), 1) * 1000 / CALLS)
        before.append(_median_ms(batch(adapters[1]), 1) * 1000 / CALLS)
    return statistics.median(now), statistics.median(before)


def main() -> int:
    root = Path(tempfile.mkdtemp(prefix="bench-masks-", dir="/var/tmp"))
    missed = False
    try:
        ws = _workspace(root)
        figures = _sandboxes(ws)
        masked_ms, bare_ms = figures["start"]  # type: ignore[misc]
        ratio = masked_ms / bare_ms
        missed |= masked_ms - bare_ms > START_ADDED_MS
        print(
            json.dumps(
                {
                    "name": "sandbox_start_masked_ms",
                    "value": round(masked_ms, 2),
                    "unit": "ms",
                    "bare_ms": round(bare_ms, 2),
                    "ratio_to_bare": round(ratio, 3),
                    "added_ms": round(masked_ms - bare_ms, 2),
                    "bound": START_ADDED_MS,
                    "within": "max",
                    "bounded": "added_ms",
                    "pass": masked_ms - bare_ms <= START_ADDED_MS,
                    "dirs": DIRS,
                    "nested": NESTED,
                    "mount_args": figures["mounts"],
                }
            )
        )
        walk = figures["walk"]
        print(json.dumps({"name": "sandbox_walk_ms", "value": round(walk, 2), "unit": "ms"}))  # type: ignore[arg-type]
        for tool, args in (
            ("read_file", {"path": "a.txt"}),
            ("write_file", {"path": "pkg1/mod1/a.py", "content": "x"}),
        ):
            pair = (
                _adapter(ws, WorkspaceGuard(ws, yolo=Yolo.YOLO)),
                _adapter(ws, _Before(ws, yolo=Yolo.YOLO)),
            )
            now, before = _per_call_us(pair, tool, args)
            missed |= now / before > GUARD_BOUND
            print(
                json.dumps(
                    {
                        "name": f"file_{tool}_us",
                        "value": round(now, 2),
                        "unit": "us",
                        "before_us": round(before, 2),
                        "ratio_to_before": round(now / before, 3),
                        "bound": GUARD_BOUND,
                        "within": "max",
                        "bounded": "ratio_to_before",
                        "pass": now / before <= GUARD_BOUND,
                    }
                )
            )
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
