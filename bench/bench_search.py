"""`search` on a large generated tree: ripgrep (the wheel's rg) vs the pure-Python fallback.

Generates a tree under a temporary directory (default 20 000 files, ~200 MB, with a .gitignore'd
`node_modules/`), runs the real `search` executor with each engine for a few patterns (median
of several runs, both engines in this one process) and deletes the tree afterwards. Prints one
JSON line per figure; the fallback's lines carry `ratio_to_rg`. Both engines must return the same
matches and totals, or the benchmark fails (a fast wrong answer is not a figure).

Environment knobs: BENCH_SEARCH_FILES (file count), BENCH_SEARCH_KB (mean file size in KB),
BENCH_SEARCH_RUNS (runs per figure).
"""

from __future__ import annotations

import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

from yagent.tools import search as search_mod
from yagent.tools.adapter import ToolContext
from yagent.tools.guard import WorkspaceGuard
from yagent.tools.search import search
from yagent.tools.surface import Surface
from yagent.toolspec import BUILTIN, profile
from yagent.toolspec.params import SearchArgs

FILES = int(os.environ.get("BENCH_SEARCH_FILES", "20000"))
MEAN_KB = int(os.environ.get("BENCH_SEARCH_KB", "10"))
RUNS = int(os.environ.get("BENCH_SEARCH_RUNS", "5"))

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


async def main() -> int:
    real_find = search_mod.find_rg
    search_mod.SEARCH_TIMEOUT = 600.0
    with tempfile.TemporaryDirectory(prefix="bench_search_") as tmp:
        root = Path(tmp)
        started = time.perf_counter()
        files, size = generate(root)
        gen_s = time.perf_counter() - started
        tree = {"files": files, "bytes": size, "generate_s": round(gen_s, 1)}
        print(json.dumps({"name": "search.tree", **tree}))
        ctx = ToolContext(root, Surface(BUILTIN, profile("coding"), WorkspaceGuard(root)))
        for label, kwargs in PATTERNS:
            args = SearchArgs(**kwargs)
            times: dict[str, list[float]] = {"ripgrep": [], "python-fallback": []}
            answers: dict[str, dict[str, Any]] = {}
            for _ in range(RUNS):
                for engine, finder in (("ripgrep", real_find), ("python-fallback", lambda: None)):
                    search_mod.find_rg = finder  # type: ignore[assignment]
                    ms, result = await timed(ctx, args)
                    assert result["engine"] == engine, result.get("note")
                    times[engine].append(ms)
                    answers[engine] = result
            search_mod.find_rg = real_find
            rg, py = answers["ripgrep"], answers["python-fallback"]
            if rg["matches"] != py["matches"] or rg["total_matches"] != py["total_matches"]:
                print(f"engines disagree on {label}", file=sys.stderr)
                return 1
            rg_ms = statistics.median(times["ripgrep"])
            py_ms = statistics.median(times["python-fallback"])
            common = {"unit": "ms", "runs": RUNS, "total_matches": rg["total_matches"]}
            common["more"] = rg.get("more", False)
            print(json.dumps({"name": f"search.rg.{label}", "value": round(rg_ms, 1), **common}))
            fallback = {"value": round(py_ms, 1), "ratio_to_rg": round(py_ms / rg_ms, 1)}
            print(json.dumps({"name": f"search.fallback.{label}", **fallback, **common}))
    return 0


if __name__ == "__main__":
    sys.exit(anyio.run(main))
