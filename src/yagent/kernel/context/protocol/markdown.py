"""protocol.markdown: a report rendered as Markdown for people.

Guarantees: every field of the report appears (empty sections are left out); a report that went
through repair, or has low confidence, says so at the top; single-line places (titles, list
items, references) never break the document's structure — newlines are folded to spaces and code
spans are fenced with enough backticks for their content. Summary and detail text are the
model's Markdown and are kept as written.
"""

from __future__ import annotations

import re

from yagent.kernel.context.protocol.report import Report

_SEVERITY_RANK = {"critical": 0, "high": 1, "medium": 2, "low": 3, "info": 4}


def _line(text: str) -> str:
    return " ".join(text.split())


def _code(text: str) -> str:
    text = _line(text)
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _indent(text: str) -> str:
    return "\n".join(("   " + line) if line.strip() else "" for line in text.strip().splitlines())


def render_markdown(report: Report, *, repaired: bool = False, title: str | None = None) -> str:
    """Markdown for `report`; `repaired=True` adds the repair warning (see `Parsed.repaired`)."""
    heading = _line(title) if title else f"Report from {_line(report.agent)}"
    out = [
        f"## {heading}",
        "",
        f"**Status:** {report.status} · **Confidence:** {report.confidence}",
    ]
    if repaired:
        out += ["", "> ⚠ This report was repaired from malformed output: its confidence is low."]
    elif report.confidence == "low":
        out += ["", "> Low confidence: verify before relying on it."]
    out += ["", report.summary.strip()]
    if report.findings:
        out += ["", "### Findings", ""]
        ordered = sorted(report.findings, key=lambda f: _SEVERITY_RANK[f.severity])
        for number, finding in enumerate(ordered, 1):
            out.append(f"{number}. **[{finding.severity}]** {_line(finding.title)}")
            if finding.detail.strip():
                out.append(_indent(finding.detail))
    if report.evidence:
        out += ["", "### Evidence", ""]
        for item in report.evidence:
            line = f"- {item.kind}: {_code(item.ref)}"
            out.append(f"{line} — {_line(item.excerpt)}" if item.excerpt.strip() else line)
    if report.next_steps:
        out += ["", "### Next steps", ""]
        out += [f"- {_line(step)}" for step in report.next_steps]
    return "\n".join(out) + "\n"
