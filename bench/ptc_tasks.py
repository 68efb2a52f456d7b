"""The scripted tasks of `bench_ptc.py`: deterministic data, the ReAct model's calls and
reasoning, and the program the scripted model writes for the same task (one answer, two ways)."""

from __future__ import annotations

import json
import math
import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

SEED = 10


@dataclass
class Task:
    name: str
    prompt: str
    files: dict[str, str]
    react_calls: Callable[[dict[str, Any]], list[tuple[str, dict[str, Any]]]]
    answer: Callable[[list[Any]], str]  # the scripted model's reasoning over raw results
    program: str
    from_value: Callable[[Any], str]  # the scripted model's answer from the program's value


def longest_function(content: str) -> int:
    lines, start, longest = content.split("\n"), -1, 0
    for i, line in enumerate(lines):
        if line.startswith("def "):
            if start >= 0:
                longest = max(longest, i - start)
            start = i
    return max(longest, len(lines) - start) if start >= 0 else 0


def python_file(rng: random.Random, n: int) -> str:
    out = [f'"""Module {n}."""', "", "import os", ""]
    for f in range(rng.randint(3, 7)):
        body = rng.randint(45, 70) if rng.random() < 0.08 else rng.randint(4, 28)
        out.append(f"def func_{n}_{f}(value, option=None):")
        out += [f"    step_{i} = compute(value, {i}) + offset_{i % 7}" for i in range(body)]
        out += ["    return value", ""]
    return "\n".join(out) + "\n"


def pytest_log(rng: random.Random, n: int) -> str:
    lines, failed = [f"============ test session starts (run {n}) ============"], 0
    for t in range(rng.randint(60, 160)):
        bad = rng.random() < 0.04
        failed += bad
        status = "FAILED" if bad else "PASSED"
        lines.append(f"tests/test_mod{t % 17}.py::test_case_{n}_{t} {status}")
    passed = len(lines) - 1 - failed
    head = f"{failed} failed, {passed} passed" if failed else f"{passed} passed"
    lines.append(f"============ {head} in {rng.uniform(2, 40):.2f}s ============")
    return "\n".join(lines) + "\n"


def manifest(rng: random.Random, n: int) -> str:
    deps = {
        f"lib-{rng.randint(1, 60)}": f"^{rng.randint(0, 5)}.{rng.randint(0, 9)}.0"
        for _ in range(12)
    }
    if rng.random() < 0.5:
        deps["left-pad"] = rng.choice(["^1.1.3", "~1.2.0", "1.3.0", "^1.3.2", "1.0.1"])
    return json.dumps({"name": f"svc-{n}", "version": "1.0.0", "dependencies": deps}, indent=2)


def access_log(rng: random.Random, n: int, endpoints: list[str]) -> str:
    return (
        "\n".join(
            f"2025-01-0{n + 1}T10:{i % 60:02d}:00Z GET {(e := rng.choice(endpoints))} 200 "
            f"{int(rng.lognormvariate(4 + endpoints.index(e) * 0.15, 0.5))}ms"
            for i in range(rng.randint(200, 300))
        )
        + "\n"
    )


def p95(values: list[int]) -> int:
    ordered = sorted(values)
    return ordered[math.ceil(0.95 * len(ordered)) - 1]


def listing(prefix: str) -> Callable[[dict[str, Any]], list[tuple[str, dict[str, Any]]]]:
    def calls(files: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
        names = sorted(p for p in files if p.startswith(prefix + "/"))
        return [("list_dir", {"path": prefix})] + [("read_file", {"path": p}) for p in names]

    return calls


def contents(results: list[Any]) -> list[tuple[str, str]]:
    return [(r["path"], r["content"]) for r in results if "content" in r]


def tasks() -> list[Task]:
    rng = random.Random(SEED)
    src = {f"src/mod_{i:02d}.py": python_file(rng, i) for i in range(40)}
    logs = {f"logs/run_{i:02d}.log": pytest_log(rng, i) for i in range(30)}
    pkgs = {f"services/svc_{i:02d}/package.json": manifest(rng, i) for i in range(25)}
    endpoints = ["/api/users", "/api/orders", "/api/search", "/api/cart", "/api/login"]
    access = {f"access/day_{i}.log": access_log(rng, i, endpoints) for i in range(6)}
    health = {
        f"http://svc-{i}.internal/health": json.dumps(
            {
                "service": f"svc-{i}",
                "status": rng.choice(["ok", "ok", "ok", "degraded"]),
                "latency_ms": rng.choice([rng.randint(20, 200)] * 5 + [rng.randint(500, 900)]),
                "version": f"2.{i}.1",
            }
        )
        for i in range(8)
    }
    files = {**src, **logs, **pkgs, **access, **health}

    def read_all(prefix: str, per_file: str, merge: str) -> str:
        return (
            f'const {{entries}} = await host.list_dir("{prefix}");\nconst out = [];\n'
            "for (const name of entries) {\n"
            f"  const {{content}} = await host.read_file(`{prefix}/${{name}}`);\n"
            f"  {per_file}\n}}\n{merge}"
        )

    def left_pad_old(text: str) -> bool:
        spec = json.loads(text)["dependencies"].get("left-pad")
        if spec is None:
            return False
        major, minor, _ = (int(x) for x in spec.lstrip("^~").split("."))
        return (major, minor) < (1, 3)

    def slowest(results: list[Any]) -> str:
        times: dict[str, list[int]] = {}
        for _, text in contents(results):
            for m in re.finditer(r"GET (\S+) 200 (\d+)ms", text):
                times.setdefault(m[1], []).append(int(m[2]))
        name = max(times, key=lambda e: p95(times[e]))
        return f"{name} p95={p95(times[name])}ms"

    return [
        Task(
            "long_functions",
            "Which of the 40 files in src/ define a function longer than 50 lines?",
            files,
            listing("src"),
            lambda rs: ", ".join(
                p.split("/")[-1] for p, c in contents(rs) if longest_function(c) > 50
            ),
            read_all(
                "src",
                'const lines = content.split("\\n"); let start = -1, longest = 0;\n'
                '  lines.forEach((l, i) => { if (l.startsWith("def ")) { if (start >= 0) '
                "longest = Math.max(longest, i - start); start = i; } });\n"
                "  if (start >= 0) longest = Math.max(longest, lines.length - start);\n"
                "  if (longest > 50) out.push(name);",
                "return out;",
            ),
            lambda v: ", ".join(v),
        ),
        Task(
            "failing_tests",
            "Sum the failing tests across the 30 pytest logs in logs/.",
            files,
            listing("logs"),
            lambda rs: str(
                sum(int(m[1]) for _, c in contents(rs) for m in re.finditer(r"(\d+) failed", c))
            ),
            read_all(
                "logs",
                "const m = /(\\d+) failed/.exec(content); out.push(m ? Number(m[1]) : 0);",
                "return out.reduce((a, b) => a + b, 0);",
            ),
            str,
        ),
        Task(
            "vulnerable_deps",
            "Which of the 25 services depend on left-pad older than 1.3?",
            files,
            lambda fs: (
                [("list_dir", {"path": "services"})]
                + [("read_file", {"path": p}) for p in sorted(fs) if p.endswith("package.json")]
            ),
            lambda rs: ", ".join(json.loads(c)["name"] for _, c in contents(rs) if left_pad_old(c)),
            'const {entries} = await host.list_dir("services");\nconst out = [];\n'
            "for (const dir of entries) {\n"
            "  const file = await host.read_file(`services/${dir}/package.json`);\n"
            "  const m = JSON.parse(file.content);\n"
            '  const spec = m.dependencies["left-pad"]; if (!spec) continue;\n'
            '  const [major, minor] = spec.replace(/^[\\^~]/, "").split(".").map(Number);\n'
            "  if (major < 1 || (major === 1 && minor < 3)) out.push(m.name);\n}\nreturn out;",
            lambda v: ", ".join(v),
        ),
        Task(
            "slowest_endpoint",
            "Across the 6 access logs in access/, which endpoint has the highest p95 latency?",
            files,
            listing("access"),
            slowest,
            read_all(
                "access",
                "for (const m of content.matchAll(/GET (\\S+) 200 (\\d+)ms/g)) "
                "(out[m[1]] ??= []).push(Number(m[2]));",
                "const p95 = (v) => v.sort((a, b) => a - b)[Math.ceil(0.95 * v.length) - 1];\n"
                "let best = null;\nfor (const [e, v] of Object.entries(out)) { const p = p95(v); "
                "if (!best || p > best[1]) best = [e, p]; }\nreturn best;",
            ).replace("const out = [];", "const out = {};"),
            lambda v: f"{v[0]} p95={v[1]}ms",
        ),
        Task(
            "degraded_services",
            "Check the health endpoints of svc-0 … svc-7; list degraded or slow (>500 ms) ones.",
            files,
            lambda fs: [
                ("http_get", {"url": u}) for u in sorted(u for u in fs if u.startswith("http"))
            ],
            lambda rs: ", ".join(
                r["service"] for r in rs if r["status"] != "ok" or r["latency_ms"] > 500
            ),
            "const out = [];\nfor (let i = 0; i < 8; i++) {\n"
            "  const h = await host.http_get(`http://svc-${i}.internal/health`);\n"
            '  if (h.status !== "ok" || h.latency_ms > 500) out.push(h.service);\n}\nreturn out;',
            lambda v: ", ".join(v),
        ),
    ]
