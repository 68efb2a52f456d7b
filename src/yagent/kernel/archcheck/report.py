"""Human-readable output of a judgement: the first few violations, then the count.

Everything that was judged is accounted for in the output: excused violations and non-blocking
structural warnings are counted (and listed in full with `--report`), never silently dropped.
"""

from __future__ import annotations

from yagent.kernel.archcheck.gate import Report

DEFAULT_LIMIT = 10


def render(report: Report, full: bool = False, limit: int = DEFAULT_LIMIT) -> list[str]:
    lines: list[str] = []
    shown = report.violations if full else report.violations[:limit]
    lines.extend(v.render() for v in shown)
    if full:
        lines.extend(
            f"warning (thresholds.enforce is false): {v.render()}" for v in report.warnings
        )
        lines.extend(
            f"excused until {exc.until.isoformat()} ({exc.reason}): {v.render()}"
            for v, exc in report.excused
        )
    total = len(report.violations)
    summary = f"archcheck: {total} violation{'' if total == 1 else 's'}"
    if total > len(shown):
        summary += f" ({len(shown)} shown; --report lists all)"
    extras = []
    if report.warnings:
        extras.append(f"{len(report.warnings)} non-blocking structural warnings")
    if report.excused:
        extras.append(f"{len(report.excused)} excused by exceptions")
    if extras:
        summary += "; " + ", ".join(extras)
        if not full:
            summary += " (--report lists them)"
    lines.append(summary)
    return lines
