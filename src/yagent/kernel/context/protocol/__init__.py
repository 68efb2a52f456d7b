"""protocol: the agent report contract — a whitelisted schema, tolerant parsing, Markdown.

Contract (details in each module's docstring):
- `report`: the `Report` fields and values on a whitelist (pydantic models, JSON Schema export),
  narrowed further by a host's `Whitelist`.
- `parse`: five levels — strict JSON, fenced block, balanced object in prose, `json_repair` —
  then `NotReportError`. Anything that passed through repair has `confidence = "low"`;
  structureless text (no object, a key without a colon) is never repaired into a report.
- `markdown`: a report rendered for people, repair and low confidence stated at the top.
Leaves to the host: which agents exist, prompting the model with `report_schema()`, and what a
low-confidence report triggers (review, a retry).
"""

from yagent.kernel.context.protocol.errors import NotReportError, ProtocolError, SchemaError
from yagent.kernel.context.protocol.markdown import render_markdown
from yagent.kernel.context.protocol.parse import MAX_CHARS, Level, Parsed, parse_report
from yagent.kernel.context.protocol.report import (
    Evidence,
    Finding,
    Report,
    Whitelist,
    report_schema,
    validate_report,
)

__all__ = [
    "MAX_CHARS",
    "Evidence",
    "Finding",
    "Level",
    "NotReportError",
    "Parsed",
    "ProtocolError",
    "Report",
    "SchemaError",
    "Whitelist",
    "parse_report",
    "render_markdown",
    "report_schema",
    "validate_report",
]
