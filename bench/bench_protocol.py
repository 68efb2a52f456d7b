"""Parse throughput of `yagent.kernel.context.protocol` on a corpus of messy model outputs.

The corpus (seeded, 270 texts) mixes the shapes models really produce: strict JSON, fenced blocks,
JSON wrapped in prose, trailing commas, single quotes, truncated output, missing values, keys
without colons, and prose with no JSON at all. Prints JSON lines: parses per second (median of
several runs), the share of the corpus landing at each level (strict / fenced / extracted /
repaired / not a report), and per shape whether the outcome matched what the contract demands
(repairable shapes parse at the repair level with confidence low, structureless ones are refused).
Bound: every shape's share as the contract demands is 1.0 (`within: min`); the benchmark exits 1
when any shape misses it.
"""

from __future__ import annotations

import json
import random
import statistics
import sys
import time
from collections import Counter
from typing import Any

from benchlib import Report
from yagent.kernel.context.protocol import Level, NotReportError, parse_report

RUNS = 7
PER_SHAPE = 30
SEED = 6

WORDS = [
    "cache",
    "index",
    "build",
    "test",
    "config",
    "module",
    "service",
    "request",
    "timeout",
    "retry",
    "log",
    "path",
    "isn't",
    "won't",
]


def report(rng: random.Random) -> dict[str, Any]:
    def sentence(n: int) -> str:
        return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."

    return {
        "agent": rng.choice(["worker-1", "reviewer", "planner.v2", "ops:7"]),
        "status": rng.choice(["done", "partial", "blocked", "failed"]),
        "summary": " ".join(sentence(rng.randint(5, 14)) for _ in range(rng.randint(1, 4))),
        "findings": [
            {"title": sentence(4), "detail": sentence(12), "severity": rng.choice(["low", "high"])}
            for _ in range(rng.randint(0, 4))
        ],
        "evidence": [
            {"kind": "file", "ref": f"src/{rng.choice(WORDS)}.py", "excerpt": sentence(6)}
            for _ in range(rng.randint(0, 3))
        ],
        "confidence": rng.choice(["high", "medium"]),
        "next_steps": [sentence(5) for _ in range(rng.randint(0, 3))],
    }


def prose(rng: random.Random) -> str:
    return rng.choice(
        [
            "Sure! Here is the report you asked for.",
            "I have finished the task. Summary below:",
            "After looking at the code, my conclusion follows.",
        ]
    )


def shape(name: str, rng: random.Random) -> str:
    text = json.dumps(report(rng), indent=rng.choice([None, 2]))
    if name == "strict":
        return text
    if name == "fenced":
        return f"{prose(rng)}\n\n```json\n{text}\n```\nLet me know if you need more."
    if name == "prose_wrapped":
        return f"{prose(rng)} {text} Hope this helps."
    if name == "trailing_commas":
        return text.replace("]", ",]").replace("}", ",}")
    if name == "single_quotes":
        return f"{prose(rng)}\n{text.replace(chr(34), chr(39))}"
    if name == "truncated":
        return text[: rng.randint(len(text) // 3, len(text) - 2)]
    if name == "missing_values":
        return text.replace('"medium"', "").replace('"high"', "")
    if name == "no_colon":
        return text.replace('": ', '" ', 1).replace('":', '"', 1)
    return f"{prose(rng)} " + " ".join(rng.choice(WORDS) for _ in range(rng.randint(10, 60)))


SHAPES = [
    "strict",
    "fenced",
    "prose_wrapped",
    "trailing_commas",
    "single_quotes",
    "truncated",
    "missing_values",
    "no_colon",
    "no_json",
]
EXPECT = {  # what the contract demands per shape
    "strict": {"strict"},
    "fenced": {"fenced"},
    "prose_wrapped": {"extracted"},
    "trailing_commas": {"repaired"},
    "single_quotes": {"repaired"},
    "truncated": {"repaired", "not_report"},  # a cut before the required fields is no report
    "missing_values": {"repaired"},
    "no_colon": {"not_report"},
    "no_json": {"not_report"},
}


def outcome(text: str) -> str:
    try:
        parsed = parse_report(text)
    except NotReportError:
        return "not_report"
    if parsed.level is Level.REPAIRED and parsed.report.confidence != "low":
        raise AssertionError("a repaired report kept its confidence")
    return parsed.level.name.lower()


def main() -> int:
    bench = Report()
    rng = random.Random(SEED)
    corpus = [(name, shape(name, rng)) for name in SHAPES for _ in range(PER_SHAPE)]
    results = [(name, outcome(text)) for name, text in corpus]
    timings = []
    for _ in range(RUNS):
        start = time.perf_counter()
        for _, text in corpus:
            outcome(text)
        timings.append(time.perf_counter() - start)
    per_run = statistics.median(timings)
    print(
        json.dumps(
            {
                "name": "protocol.parse_throughput",
                "value": round(len(corpus) / per_run, 1),
                "unit": "parses/s",
                "corpus": len(corpus),
                "runs": RUNS,
                "median_run_s": round(per_run, 4),
            }
        )
    )
    levels = Counter(level for _, level in results)
    for level in ("strict", "fenced", "extracted", "repaired", "not_report"):
        print(
            json.dumps(
                {
                    "name": f"protocol.share.{level}",
                    "value": round(levels[level] / len(corpus), 3),
                    "unit": "share of corpus",
                    "count": levels[level],
                }
            )
        )
    for name in SHAPES:
        got = Counter(level for shape_name, level in results if shape_name == name)
        matched = sum(n for level, n in got.items() if level in EXPECT[name])
        bench.figure(
            f"protocol.contract.{name}",
            round(matched / PER_SHAPE, 3),
            "share as the contract demands",
            bound=1.0,
            within="min",
            outcomes=dict(sorted(got.items())),
        )
    return bench.exit_code()


if __name__ == "__main__":
    sys.exit(main())
