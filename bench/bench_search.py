"""`search` on a large generated tree: yagent's search vs plain `rg`, and vs its own fallback.

Generates a tree under a temporary directory (default 50 000 files, ~200 MB, with a .gitignore'd
`node_modules/`) and deletes it afterwards. For each pattern:
- `search.rg.<pattern>`: the real `search` executor (rg engine) against plain `rg` on the same
  files (`rg --no-config --hidden --no-ignore-global --glob !.git` with the same flags, output
  read to the end through a pipe — what a person would run), measured as interleaved pairs; the
  figure is the median of the per-pair ratios. Bound: <= 1.2x plain rg (exits 1 when missed).
- `search.fallback.<pattern>`: the pure-Python fallback, fewer runs, with `ratio_to_rg`.
Both engines must return the same matches and totals, or the benchmark fails (a fast wrong
answer is not a figure).

Environment knobs: BENCH_SEARCH_FILES (file count), BENCH_SEARCH_KB (mean file size in KB),
BENCH_SEARCH_RUNS (pairs per figure), BENCH_SEARCH_FALLBACK_RUNS.
"""

from __future__ import annotations

import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

from benchlib import Report
from yagent.tools import search as search_mod
from yagent.tools.adapter import ToolContext
from yagent.tools.guard import WorkspaceGuard
from yagent.tools.search import search
from yagent.tools.surface import Surface
from yagent.toolspec.builtin import BUILTIN
from yagent.toolspec.params import SearchArgs
from yagent.toolspec.profiles import profile

FILES = int(os.environ.get("BENCH_SEARCH_FILES", "50000"))
MEAN_KB = int(os.environ.get("BENCH_SEARCH_KB", "4"))
RUNS = int(os.environ.get("BENCH_SEARCH_RUNS", "7"))
FALLBACK_RUNS = int(os.environ.get("BENCH_SEARCH_FALLBACK_RUNS", "1"))
BOUND = 1.2

_WORDS = "request response handler timeout retry buffer stream parse config value result error"
WORDS = [*_WORDS.split(), "session", "client", "server", "cache", "index", "token", "socket"]
PATTERNS: list[tuple[str, dict[str, Any]]] = [  # full scans, then one that hits COUNT_LIMIT
    ("literal_rare", {"pattern": "XYZZY_MARKER", "fixed_strings": True}),
    ("regex_rare", {"pattern": r"XYZZY_[A-Z]+: \w+ needle"}),
    ("ignore_case_rare", {"pattern": "xyzzy_marker", "ignore_case": True}),
    ("glob_py_rare", {"pattern": "XYZZY", "glob": "*.py"}),
    ("regex_dense_until_count_limit", {"pattern": r"def \w+_handler\("}),
]


def _lines(rng: random.Random, count: int, marker: bool) -> str:
    out = []
    for i in range(count):
        a, b, c = rng.choice(WORDS), rng.choice(WORDS), rng.choice(WORDS)
        kind = i % 9
        if kind == 0:
            out.append(f"def {a}_{b}_handler({c}, *args):")
        elif kind == 1:
            out.append(f"import {a}")
        else:
            out.append(f"    {a} = {b}.{c}({rng.randint(0, 9999)})  # {a} {c}")
    if marker:
        out.insert(len(out) // 2, "    # XYZZY_MARKER: the needle")
    return "\n".join(out) + "\n"


def generate(root: Path) -> tuple[int, int]:
    rng = random.Random(1234)
    (root / ".git").mkdir()
    (root / ".gitignore").write_text("node_modules/\n*.min.js\n")
    total = 0
    for n in range(FILES):
        top = "node_modules" if n % 10 == 0 else f"pkg{n % 40}"
        directory = root / top / f"mod{n % 23}"
        directory.mkdir(parents=True, exist_ok=True)
        ext = (".py", ".js", ".go", ".txt")[n % 4]
        lines = max(5, int(rng.expovariate(1.0) * MEAN_KB * 1024 / 45))
        text = _lines(rng, lines, marker=n % 997 == 5)
        (directory / f"file{n}{ext}").write_text(text)
        total += len(text)
    return FILES, total


async def timed(ctx: ToolContext, args: SearchArgs) -> tuple[float, dict[str, Any]]:
    start = time.perf_counter()
    result = await search(ctx, args)
    return (time.perf_counter() - start) * 1000, result


def plain_rg(rg: str, root: Path, kwargs: dict[str, Any]) -> float:
    """Milliseconds for plain rg on the same files, its whole output read through a pipe."""
    argv = [rg, "--no-config", "--hidden", "--no-ignore-global"]
    if kwargs.get("ignore_case"):
        argv.append("--ignore-case")
    if kwargs.get("fixed_strings"):
        argv.append("--fixed-strings")
    if kwargs.get("glob"):
        argv += ["--glob", kwargs["glob"]]
    argv += ["--glob", "!.git", "--", kwargs["pattern"], "."]
    start = time.perf_counter()
    subprocess.run(argv, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=False)
    return (time.perf_counter() - start) * 1000


async def main() -> int:
    bench = Report()
    real_find = search_mod.find_rg
    found = real_find()
    if found is None:
        print("bench_search needs rg (the ripgrep wheel or rg on PATH)", file=sys.stderr)
        return 1
    search_mod.SEARCH_TIMEOUT = 600.0
    with tempfile.TemporaryDirectory(prefix="bench_search_") as tmp:
        root = Path(tmp)
        started = time.perf_counter()
        files, size = generate(root)
        gen_s = round(time.perf_counter() - started, 1)
        bench.figure("search.tree", files, "files", bytes=size, generate_s=gen_s)
        ctx = ToolContext(root, Surface(BUILTIN, profile("coding"), WorkspaceGuard(root)))
        for label, kwargs in PATTERNS:
            args = SearchArgs(**kwargs)
            ours: list[float] = []
            plain: list[float] = []
            for i in range(RUNS):  # interleaved pairs: ours, plain / plain, ours
                order = ("ours", "plain") if i % 2 == 0 else ("plain", "ours")
                for side in order:
                    if side == "plain":
                        plain.append(plain_rg(found.path, root, kwargs))
                    else:
                        ms, rg = await timed(ctx, args)
                        assert rg["engine"] == "ripgrep", rg.get("note")
                        ours.append(ms)
            ratios = [o / p for o, p in zip(ours, plain, strict=True)]
            search_mod.find_rg = lambda: None  # type: ignore[assignment]
            py_times = []
            for _ in range(FALLBACK_RUNS):
                py_ms, py = await timed(ctx, args)
                py_times.append(py_ms)
            search_mod.find_rg = real_find
            if rg["matches"] != py["matches"] or rg["total_matches"] != py["total_matches"]:
                print(f"engines disagree on {label}", file=sys.stderr)
                return 1
            rg_ms, py_ms = statistics.median(ours), statistics.median(py_times)
            common = {"total_matches": rg["total_matches"], "more": rg.get("more", False)}
            bench.figure(
                f"search.rg.{label}",
                round(statistics.median(ratios), 2),
                "x plain rg",
                bound=BOUND,
                ms=round(rg_ms, 1),
                plain_rg_ms=round(statistics.median(plain), 1),
                pairs=RUNS,
                **common,
            )
            bench.figure(
                f"search.fallback.{label}",
                round(py_ms, 1),
                "ms",
                ratio_to_rg=round(py_ms / rg_ms, 1),
                runs=FALLBACK_RUNS,
                **common,
            )
    return bench.exit_code()


if __name__ == "__main__":
    sys.exit(anyio.run(main))
