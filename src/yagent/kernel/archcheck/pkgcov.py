"""pkgcov: per-package coverage floor from `coverage json` output.

The overall percentage hides a collapsing package (a large well-tested package can carry a small
untested one), so each package is judged on its own. Packages: every `<top>/<split>/<name>` (a
module file or a sub-package of the split package, e.g. each `yagent/kernel/<name>`) is one package,
and inside a group (`KERNEL_GROUPS`, e.g. `yagent/kernel/judge/`) every `<group>/<name>` is one
(`yagent.kernel.judge.invoke`); `<top>/<split>/__init__.py` and friends are the package
`<top>.<split>`, a group's own `__init__.py` the package `<top>.<split>.<group>`; every other
first-level sub-package `<top>/<layer>` is one package; files directly in `<top>/` are the package
`<top>`.

Percent = (covered lines + covered branches) / (statements + branches), as coverage.py computes
it; a package with nothing to measure is 100 %. A package below the floor fails unless exempted
with a reason; an exemption fails too when its package meets the floor (the exemption is no longer
needed: remove it) or names no package in the report.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from yagent.kernel.archcheck.model import KERNEL_GROUPS


@dataclass(slots=True)
class Tally:
    covered: int = 0
    total: int = 0
    files: int = 0

    @property
    def percent(self) -> float:
        return 100.0 * self.covered / self.total if self.total else 100.0


def package_of(
    path: str, top: str = "yagent", split: str = "kernel", groups: frozenset[str] = KERNEL_GROUPS
) -> str | None:
    """The package a measured file belongs to, or None when it is not under `top`."""
    parts = PurePosixPath(path.replace("\\", "/")).parts
    indices = [i for i, part in enumerate(parts) if part == top and i < len(parts) - 1]
    if not indices:
        return None
    rest = parts[indices[-1] + 1 :]
    if len(rest) == 1:
        return top
    if rest[0] != split:
        return f"{top}.{rest[0]}"
    prefix = f"{top}.{split}"
    if len(rest) > 2 and rest[1] in groups:
        prefix, rest = f"{prefix}.{rest[1]}", rest[1:]
    name = rest[1].removesuffix(".py")
    if len(rest) == 2 and name in ("__init__", "__main__"):
        return prefix
    return f"{prefix}.{name}"


def tally(
    report: dict[str, Any], top: str = "yagent", split: str = "kernel"
) -> tuple[dict[str, Tally], list[str]]:
    """Per-package tallies, and the measured paths that belong to no package of `top`."""
    files = report.get("files")
    if not isinstance(files, dict):
        raise ValueError("not a `coverage json` report: no `files` mapping")
    tallies: dict[str, Tally] = {}
    outside: list[str] = []
    for path, data in sorted(files.items()):
        package = package_of(path, top, split)
        if package is None:
            outside.append(path)
            continue
        summary = data["summary"]
        entry = tallies.setdefault(package, Tally())
        entry.covered += int(summary["covered_lines"]) + int(summary.get("covered_branches", 0))
        entry.total += int(summary["num_statements"]) + int(summary.get("num_branches", 0))
        entry.files += 1
    return tallies, outside


def judge(
    tallies: dict[str, Tally], minimum: float, exempt: dict[str, str]
) -> tuple[list[str], list[str]]:
    """(table lines, failures)."""
    table = [f"{'package':<40} {'files':>5} {'covered':>9} {'total':>7} {'percent':>8}"]
    failures: list[str] = []
    for name, entry in sorted(tallies.items()):
        mark = ""
        if name in exempt:
            mark = f"  exempt: {exempt[name]}"
            if entry.percent >= minimum:
                failures.append(
                    f"{name}: {entry.percent:.2f} % meets the floor {minimum:g} %: exemption no "
                    "longer needed: remove it"
                )
        elif entry.percent < minimum:
            mark = "  BELOW FLOOR"
            failures.append(f"{name}: {entry.percent:.2f} % < floor {minimum:g} %")
        table.append(
            f"{name:<40} {entry.files:>5} {entry.covered:>9} {entry.total:>7} "
            f"{entry.percent:>7.2f}%{mark}"
        )
    failures.extend(
        f"{name}: exempted but no such package in the report (known: "
        f"{', '.join(sorted(tallies)) or 'none'})"
        for name in sorted(set(exempt) - set(tallies))
    )
    return table, failures


def parse_exemptions(items: list[str]) -> tuple[dict[str, str], list[str]]:
    """`PKG=reason` pairs (PKG with dots or slashes); every one needs a reason."""
    exempt: dict[str, str] = {}
    problems: list[str] = []
    for item in items:
        name, _, reason = item.partition("=")
        name = name.strip().strip("/").replace("/", ".")
        if not name or not reason.strip():
            problems.append(f"--exempt {item!r}: expected PKG=reason with a non-empty reason")
            continue
        exempt[name] = reason.strip()
    return exempt, problems


def run_pkgcov(report_path: Path, minimum: float, exemptions: list[str]) -> tuple[int, list[str]]:
    """Exit status and output lines for `pkgcov`."""
    exempt, problems = parse_exemptions(exemptions)
    if problems:
        return 2, problems
    try:
        tallies, outside = tally(json.loads(report_path.read_text(encoding="utf-8")))
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        return 2, [f"pkgcov: cannot read coverage report {report_path}: {exc}"]
    table, failures = judge(tallies, minimum, exempt)
    if outside:
        table.append(f"({len(outside)} measured files outside the package tree were not judged)")
    if failures:
        return 1, [*table, *(f"pkgcov: {f}" for f in failures)]
    return 0, [*table, f"pkgcov: every package meets {minimum:g} % ({len(tallies)} packages)"]
